// The import's duplicate-palm check within one batch (its searches are batched: every candidate is
// staged, then all are searched at once) gives what checking one member at a time would: the
// first of each palm is kept, later copies are refused, a refused member does not block anyone,
// and a palm repeated more often than one search's hits can show is still decided in order.
import fs from 'node:fs/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { useCliTenant } from '../support/cli-tenant.js'
import { enroll, enrollBody, identify, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 40, seed: 11 })

function line(identity: number, name: string): Record<string, any> {
  const { member_id: _unused, ...hands } = enrollBody(palms, identity, 'x')
  return { display_name: name, ...hands }
}

describe('palmvein import: duplicate palms within a batch', () => {
  const cli = useCliTenant('import-duplicates@example.com')
  let svc: TestService, tenant: PalmTenant, env: Record<string, string | undefined>
  beforeAll(() => ({ svc, tenant, env } = cli))

  async function importLines(name: string, lines: object[]) {
    const rejectsFile = cli.file(`${name}.rejects.ndjson`)
    const result = await runCli(['import', '--project', tenant.projectId, '--rejects', rejectsFile, '--batch', '50', await cli.writeLines(name, lines)], env)
    // stderr says only what was refused, per reason (the rejects file has each line).
    expect(
      result.stderr
        .trim()
        .split('\n')
        .filter(Boolean)
        .every((line) => line.startsWith('palmvein import: refused ')),
    ).toBe(true)
    const rejects = (await fs.readFile(rejectsFile, 'utf8'))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
    return {
      code: result.code,
      summary: JSON.parse(result.stdout),
      rejected: rejects.map((rejection) => [rejection.line, rejection.code]).sort((a, b) => a[0] - b[0]),
    }
  }

  async function identifiedName(identity: number): Promise<string | null> {
    const answer = await identify(svc, tenant, identifyBody(palms, identity, 'right'))
    if (answer.status !== 'Found') return null
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${answer.member_id}`, { auth: tenant.key })
    return member.body.display_name
  }

  it('keeps the first of each palm, refuses later copies and copies of stored members, in input order', async () => {
    const stored = await svc.request('POST', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.key, body: { display_name: 'Stored 5' } })
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 5, stored.body.member_id)), 200)
    const result = await importLines('batch', [
      line(1, 'First 1'),
      line(2, 'First 2'),
      line(1, 'Copy 1'),
      line(5, 'Copy of stored 5'),
      line(5, 'Second copy of stored 5'),
      line(3, 'First 3'),
      line(2, 'Copy 2'),
    ])
    expect(result.code).toBe(1)
    expect(result.summary).toMatchObject({ imported: 3, rejected: 4, duplicates: 4 })
    expect(result.rejected).toEqual([
      [3, 'duplicate_palm'],
      [4, 'duplicate_palm'],
      [5, 'duplicate_palm'],
      [7, 'duplicate_palm'],
    ])
    for (const [identity, name] of [
      [1, 'First 1'],
      [2, 'First 2'],
      [3, 'First 3'],
      [5, 'Stored 5'],
    ] as const) {
      await expect.poll(() => identifiedName(identity), { timeout: 10_000, interval: 200 }).toBe(name)
    }
  })

  it('decides a palm repeated more often than one search shows, still keeping only the first', async () => {
    const copies = Array.from({ length: 9 }, (_, index) => line(7, `Copy ${index} of 7`))
    const result = await importLines('repeated', [line(8, 'Before'), ...copies, line(9, 'After')])
    expect(result.summary).toMatchObject({ imported: 3, rejected: 8, duplicates: 8 })
    expect(result.rejected).toEqual(Array.from({ length: 8 }, (_, index) => [index + 3, 'duplicate_palm']))
    for (const [identity, name] of [
      [7, 'Copy 0 of 7'],
      [8, 'Before'],
      [9, 'After'],
    ] as const) {
      await expect.poll(() => identifiedName(identity), { timeout: 10_000, interval: 200 }).toBe(name)
    }
  })
})
