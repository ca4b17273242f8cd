// `palmvein import` through the real CLI, beside a running service on the same database: good
// lines land and the service identifies them (its gallery picks the batches up), bad lines are
// refused with their line numbers and the API's codes, a rerun skips what is present, and the
// headcount holds.
import fs from 'node:fs/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { createOrganization } from '../../src/domain/tenants/organizations.js'
import { useCliTenant } from '../support/cli-tenant.js'
import { enroll, enrollBody, identify, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { createProjectOnPlan } from '../support/plans.js'
import { runCli, spawnCli } from '../support/process.js'
import { expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 140 })

/** An import line for a synthetic identity: both hands, as the enroll body has them. */
function line(identity: number, extra: Record<string, unknown> = {}): Record<string, any> {
  const { member_id: _unused, ...hands } = enrollBody(palms, identity, 'x')
  return { display_name: `Person ${identity}`, ...hands, ...extra }
}

describe('palmvein import', () => {
  const cli = useCliTenant('import-admin@example.com')
  let svc: TestService, tenant: PalmTenant, env: Record<string, string | undefined>
  beforeAll(() => ({ svc, tenant, env } = cli))
  const writeLines = (name: string, lines: ReadonlyArray<string | object>) => cli.writeLines(name, lines)

  async function identifiedAs(identity: number): Promise<string | null> {
    const answer = await identify(svc, tenant, identifyBody(palms, identity, 'left'))
    return answer.status === 'Found' ? answer.member_id : null
  }

  it('imports the good lines, refuses the bad ones with their line numbers and codes, and the running service finds the members', async () => {
    // A member enrolled through the API before the import: line 7 repeats its palms.
    const existing = await svc.request('POST', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.key, body: { display_name: 'Already here' } })
    expectStatus(existing, 201)
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 100, existing.body.member_id)), 200)
    const kept = '0190a6b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b'
    const wrongDimension = population({ identities: 4, dimension: 128 })
    const file = await writeLines('members.ndjson', [
      line(1, { member_id: kept, metadata: { employee: 'E-1' } }),
      line(2),
      '{"display_name": "broken',
      line(3, { left_hand: { enroll_capture: 'bm90IGEgdGVtcGxhdGU', identify_capture: 'bm90IGEgdGVtcGxhdGU' } }),
      {
        display_name: 'Wrong size',
        left_hand: {
          enroll_capture: Buffer.from(wrongDimension.template(0, 'left', 0, 0)).toString('base64url'),
          identify_capture: Buffer.from(wrongDimension.template(0, 'left', 0, 1)).toString('base64url'),
        },
      },
      line(2, { display_name: 'Person 2 again' }),
      line(100),
      { display_name: 'No hands' },
      { ...line(4), display_name: 'Unknown field', colour: 'blue' },
      line(5),
    ])
    const rejectsFile = cli.file('rejects.ndjson')
    const result = await runCli(['import', '--project', tenant.projectId, '--rejects', rejectsFile, '--batch', '3', file], env)
    // Each reason said plainly with its count, not only in --rejects.
    expect(result.stderr).toMatch(
      /^palmvein import: refused .*\b2 duplicate_palm: a palm matches another member's \(--allow-duplicates imports them\).*; each line is in .*rejects\.ndjson\n$/,
    )
    expect(result.code).toBe(1)
    const summary = JSON.parse(result.stdout)
    expect(summary).toMatchObject({ imported: 3, skipped: 0, rejected: 7, duplicates: 2 })
    expect(summary.seconds).toBeGreaterThan(0)
    const rejects = (await fs.readFile(rejectsFile, 'utf8'))
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text))
    expect(rejects.map((rejection) => [rejection.line, rejection.code]).sort((a, b) => a[0] - b[0])).toEqual([
      [3, 'invalid_request'],
      [4, 'capture_invalid'],
      [5, 'capture_invalid'],
      [6, 'duplicate_palm'],
      [7, 'duplicate_palm'],
      [8, 'invalid_request'],
      [9, 'invalid_request'],
    ])
    expect(rejects.find((rejection) => rejection.line === 5).detail).toMatch(/128/)
    expect(rejects.find((rejection) => rejection.line === 9).errors).toEqual([{ path: '/colour', message: 'unknown field' }])
    // No capture or template in what the rejects file says.
    expect(await fs.readFile(rejectsFile, 'utf8')).not.toContain(line(3).right_hand.enroll_capture)

    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${kept}`, { auth: tenant.key })
    expectStatus(member, 200)
    expect(member.body).toMatchObject({ display_name: 'Person 1', metadata: '{"employee":"E-1"}', palm_templates_enrolled: 4 })
    // The service picks the batches up without a restart (on PostgreSQL by notification; on the
    // embedded database from the change numbers within a second).
    await expect.poll(() => identifiedAs(1), { timeout: 10_000, interval: 200 }).toBe(kept)
    for (const identity of [2, 5]) await expect.poll(() => identifiedAs(identity), { timeout: 10_000, interval: 200 }).not.toBeNull()
    expect(await identifiedAs(3)).toBeNull()
  })

  it('export with --include-biometrics gives lines that import reproduces; without it, export refuses', async () => {
    const refused = await runCli(['export', '--project', tenant.projectId], env)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/--include-biometrics/)
    expect(refused.stdout).toBe('')

    const exported = await runCli(['export', '--project', tenant.projectId, '--include-biometrics'], env)
    expect(exported.code).toBe(0)
    expect(exported.stderr).toMatch(/holds biometric data[\s\S]*4 member\(s\)/)
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text))
    expect(lines).toHaveLength(4)
    const kept = lines.find((entry) => entry.display_name === 'Person 1')
    expect(kept).toMatchObject({ member_id: '0190a6b2-3c4d-7e5f-8a6b-7c8d9e0f1a2b', metadata: { employee: 'E-1' } })
    expect(kept.left_hand.enroll_capture).toBe(line(1).left_hand.enroll_capture)
    expect(lines.find((entry) => entry.display_name === 'Already here').right_hand.palm_position).toEqual({ x: 1, y: 2, z: 60, pitch: 0, roll: 1.5, yaw: -2 })

    // As a move between deployments: the members are gone, then the export brings them back, ids included.
    for (const entry of lines)
      expectStatus(await svc.request('DELETE', `/v1/projects/${tenant.projectId}/members/${entry.member_id}`, { auth: tenant.key }), 204)
    await expect.poll(() => identifiedAs(1), { timeout: 10_000, interval: 200 }).toBeNull()
    const file = await writeLines('exported.ndjson', lines)
    const imported = await runCli(['import', '--project', tenant.projectId, file], env)
    expect([imported.code, JSON.parse(imported.stdout)]).toMatchObject([0, { imported: 4, rejected: 0 }])
    await expect.poll(() => identifiedAs(1), { timeout: 10_000, interval: 200 }).toBe(kept.member_id)
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${kept.member_id}`, { auth: tenant.key })
    expect(member.body).toMatchObject({ display_name: 'Person 1', metadata: '{"employee":"E-1"}', palm_templates_enrolled: 4 })
  })

  it('skips members already present when run again, so an interrupted import can be completed', async () => {
    const ids = ['0190a6b2-3c4d-7e5f-8a6b-000000000011', '0190a6b2-3c4d-7e5f-8a6b-000000000012']
    const file = await writeLines('resume.ndjson', [line(11, { member_id: ids[0] }), line(12, { member_id: ids[1] })])
    const first = await runCli(['import', '--project', tenant.projectId, file], env)
    expect([first.code, JSON.parse(first.stdout)]).toMatchObject([0, { imported: 2, skipped: 0, rejected: 0 }])
    // --progress-lines: one JSON line on stderr per batch, for scripts (the benchmark reads them).
    const again = await runCli(['import', '--project', tenant.projectId, '--batch', '1', '--progress-lines', file], env)
    expect([again.code, JSON.parse(again.stdout)]).toMatchObject([0, { imported: 0, skipped: 2, rejected: 0 }])
    expect(
      again.stderr
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text)),
    ).toEqual([{ handled: 1 }, { handled: 2 }])
  })

  it('lines without a member_id: a second run of the same file skips what the first imported (their ids derive from the lines), with or without --allow-duplicates', async () => {
    const file = await writeLines('unnamed.ndjson', [line(40), line(41), line(42, { metadata: { desk: 'B' } })])
    const first = await runCli(['import', '--project', tenant.projectId, file], env)
    expect([first.code, JSON.parse(first.stdout)]).toMatchObject([0, { imported: 3, skipped: 0, rejected: 0 }])
    for (const flags of [[], ['--allow-duplicates']]) {
      const again = await runCli(['import', '--project', tenant.projectId, ...flags, file], env)
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
      expect(JSON.parse(again.stdout)).toMatchObject({ imported: 0, skipped: 3, rejected: 0, duplicates: 0 })
    }
    // One member each: the service finds each palm once.
    expect(await identifiedAs(40)).not.toBeNull()
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.key })
    expect((listed.body as Array<{ display_name: string }>).filter((member) => /^Person 4[012]$/.test(member.display_name))).toHaveLength(3)
  })

  it('a SIGKILL mid-import leaves whole members only, and a rerun completes it', async () => {
    const { projectId } = await addProjectFor(tenant, 'killed', 'enterprise')
    const members = Array.from({ length: 120 }, (_, index) => line(index, { member_id: `0190a6b2-3c4d-7e5f-9a6b-${String(index).padStart(12, '0')}` }))
    const file = await writeLines('killed.ndjson', members)
    const listed = async () => {
      const response = await svc.request('GET', `/v1/projects/${projectId}/members`, { auth: tenant.key })
      expectStatus(response, 200)
      return response.body as Array<{ member_id: string; palm_templates_enrolled: number }>
    }
    const child = spawnCli(['import', '--project', projectId, '--batch', '4', file], env)
    const exited = new Promise((resolve) => child.once('exit', resolve))
    await expect.poll(async () => (await listed()).length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0)
    child.kill('SIGKILL')
    await exited
    const partial = await listed()
    expect(partial.length).toBeLessThan(members.length)
    expect(partial.every((member) => member.palm_templates_enrolled === 4)).toBe(true)

    const rerun = await runCli(['import', '--project', projectId, '--batch', '50', file], env)
    expect({ code: rerun.code, stderr: rerun.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(rerun.stdout)).toMatchObject({ imported: members.length - partial.length, skipped: partial.length, rejected: 0 })
    expect((await listed()).length).toBe(members.length)
  }, 90_000)

  /** A project with an environment of its own; the sandbox plan admits 100 members. */
  async function addProjectFor(owner: PalmTenant, name: string, plan: 'enterprise' | 'sandbox') {
    const environment = await svc.request('POST', `/v1/organization/${owner.orgId}/environments`, { auth: owner.token, body: { name } })
    expectStatus(environment, 201)
    const project = await createProjectOnPlan(svc, owner.token, owner.orgId, { name, environment_id: environment.body.id, plan })
    return { projectId: project.id as string }
  }

  it('reads stdin, and refuses what the headcount does not allow', async () => {
    const { projectId } = await addProjectFor(tenant, 'small', 'sandbox')
    const lines = Array.from({ length: 102 }, (_, index) => JSON.stringify(line(20 + (index % 110), { display_name: `P${index}` }))).join('\n')
    const file = await writeLines('many.ndjson', [lines])
    const input = await fs.open(file)
    const result = await runCli(['import', '--project', projectId, '--allow-duplicates', '-'], env, input.fd).finally(() => input.close())
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toMatchObject({ imported: 100, rejected: 2, duplicates: 0 })
  })

  it('in small batches (on PostgreSQL two are written at once) lands the first members up to the headcount, and a last batch of bad lines still ends the import', async () => {
    const { projectId } = await addProjectFor(tenant, 'overlapping', 'sandbox')
    // 15 batches of 7 good lines (the sandbox plan admits 100 members), then a batch of one bad line.
    const members = Array.from({ length: 105 }, (_, index) =>
      line(index % 110, { member_id: `0190a6b2-3c4d-7e5f-ab6b-${String(index + 1).padStart(12, '0')}` }),
    )
    const file = await writeLines('overlapping.ndjson', [...members, '{"display_name": "cut off'])
    const rejectsFile = cli.file('overlapping.rejects')
    const result = await runCli(['import', '--project', projectId, '--allow-duplicates', '--batch', '7', '--rejects', rejectsFile, file], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 1,
      stderr: `palmvein import: refused 5 headcount_reached: the project's plan headcount is reached (palmvein project plan changes the plan); 1 invalid_request; each line is in ${rejectsFile}\n`,
    })
    expect(JSON.parse(result.stdout)).toMatchObject({
      imported: 100,
      rejected: 6,
      duplicates: 0,
      rejected_by_code: { headcount_reached: 5, invalid_request: 1 },
    })
    const rejects = (await fs.readFile(rejectsFile, 'utf8'))
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text))
    expect(rejects.map((rejection) => [rejection.line, rejection.code]).sort((a, b) => a[0] - b[0])).toEqual([
      ...[101, 102, 103, 104, 105].map((number) => [number, 'headcount_reached']),
      [106, 'invalid_request'],
    ])
    for (const number of [1, 50, 100]) {
      const member = await svc.request('GET', `/v1/projects/${projectId}/members/${members[number - 1].member_id}`, { auth: tenant.key })
      expect([number, member.status, member.body.palm_templates_enrolled]).toEqual([number, 200, 4])
    }
    const refused = await svc.request('GET', `/v1/projects/${projectId}/members/${members[100].member_id}`, { auth: tenant.key })
    expect(refused.status).toBe(404)
  })

  it('reads lines however the input is cut (CRLF ends, blank lines, no final newline, a pipe written in small pieces) and imports a repeated member_id once', async () => {
    const ids = Array.from({ length: 5 }, (_, index) => `0190a6b2-3c4d-7e5f-8a6b-0000000001${String(index).padStart(2, '0')}`)
    const good = ids.map((id, index) => JSON.stringify(line(30 + index, { member_id: id })))
    // Lines 1-2 members, 3 blank, 4 member, 5 not JSON, 6 blank (CRLF), 7 member, 8 line 1's
    // member_id again (skipped), 9 member without a final "\n".
    const text = `${good[0]}\r\n${good[1]}\n\n${good[2]}\r\n{"display_name":\n\r\n${good[3]}\n${good[0]}\n${good[4]}`
    const child = spawnCli(['import', '--project', tenant.projectId, '--batch', '2', '--rejects', cli.file('cut.rejects'), '-'], env, 'pipe')
    let stdout = ''
    child.stdout!.on('data', (chunk) => {
      stdout += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    // 97-byte pieces, each its own write: lines and batches are cut anywhere.
    for (let at = 0; at < text.length; at += 97) {
      child.stdin!.write(text.slice(at, at + 97))
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    child.stdin!.end()
    expect(await exited).toBe(1)
    expect(JSON.parse(stdout)).toMatchObject({ imported: 5, skipped: 1, rejected: 1 })
    const rejects = (await fs.readFile(cli.file('cut.rejects'), 'utf8'))
      .trim()
      .split('\n')
      .map((entry) => JSON.parse(entry))
    expect(rejects).toEqual([expect.objectContaining({ line: 5, code: 'invalid_request' })])
    for (const [index, id] of ids.entries()) {
      const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${id}`, { auth: tenant.key })
      expectStatus(member, 200)
      expect(member.body).toMatchObject({ display_name: `Person ${30 + index}`, palm_templates_enrolled: 4 })
    }
  })

  it('exits 2 on a usage error or an unknown project, before reading anything', async () => {
    const usage = await runCli(['import', '--project', tenant.projectId], env)
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(/^palmvein import: missing required argument 'file'\nsee 'palmvein import --help'\n$/)
    const unknown = await runCli(['import', '--project', '0190a6b2-3c4d-7e5f-8a6b-7c8d9e0f0000', cli.file('members.ndjson')], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/project 0190a6b2-3c4d-7e5f-8a6b-7c8d9e0f0000 not found/)
  })

  it("refuses a project that only reads another organization's (global) environment, for import and export alike, and writes nothing", async () => {
    const operator = 'import-operator@platform.example'
    const platform = await createOrganization(svc.service.app, { name: 'Import platform', kind: 'platform' }, operator)
    const global = await svc.request('POST', `/v1/organization/${platform.id}/environments`, { auth: await svc.token(operator), body: { name: 'nation' } })
    expectStatus(global, 201)
    const readOnly = await svc.request('POST', `/v1/organization/${tenant.orgId}/projects`, {
      auth: tenant.token,
      body: { name: 'reads the nation', environment_id: global.body.id, plan: 'sandbox' },
    })
    expectStatus(readOnly, 201)
    const file = await writeLines('planted.ndjson', [line(120)])
    for (const args of [
      ['import', '--project', readOnly.body.id, file],
      ['export', '--project', readOnly.body.id, '--include-biometrics'],
    ]) {
      const refused = await runCli(args, env)
      expect(refused.code, refused.stderr).toBe(2)
      expect(refused.stderr).toMatch(/reads environment .* of another organization; .* only a project whose organization owns its environment/)
    }
    expect(await svc.service.app.sql`SELECT 1 FROM members WHERE environment_id = ${global.body.id}`).toHaveLength(0)
  })
})
