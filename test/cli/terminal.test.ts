// `palmvein terminal`: the simulated terminal as an operator runs it, against a booted service.
// It links itself to a project, completes the enrollment session started for a member with that
// person's synthetic palm, and the palm is then found by identify; Ctrl-C ends it cleanly.
import { ok, syntheticCapture } from '@palmvein/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientTenant, type ClientTenant } from '../../packages/client/test/support/tenant.js'
import { runCli, spawnCli } from '../support/process.js'
import { bootService, type TestService } from '../support/service.js'

let svc: TestService
let tenant: ClientTenant
beforeAll(async () => {
  svc = await bootService()
  tenant = await createClientTenant(svc, 'kiosk-operator@example.com')
}, 120_000)
afterAll(async () => {
  await svc?.close()
})

/** Resolves with the first JSON line on `lines` that `matches`. */
function nextEvent(lines: string[], matches: (event: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  return new Promise((resolve, reject) => {
    const look = () => {
      const found = lines.map((line) => JSON.parse(line)).find(matches)
      if (found) return resolve(found)
      if (Date.now() > deadline) return reject(new Error(`no such event in: ${lines.join('\n')}`))
      setTimeout(look, 50)
    }
    look()
  })
}

describe('palmvein terminal', () => {
  it("links itself, completes a session with the person's palm (identify then finds it), and stops on SIGINT", async () => {
    const child = spawnCli(['terminal', '--url', svc.url, '--project', tenant.projectId, '--name', 'lobby'], { PALMVEIN_CREDENTIAL: tenant.key })
    const lines: string[] = []
    let buffered = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => {
      buffered += chunk
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      lines.push(...parts.filter(Boolean))
    })
    child.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    try {
      const registered = await nextEvent(lines, (event) => event.event === 'registered')
      expect(registered.registration_code).toHaveLength(8)
      await nextEvent(lines, (event) => event.event === 'linked' && event.device_id === registered.device_id)

      const member = await ok(
        tenant.keyed.POST('/v1/projects/{project_id}/members', {
          params: { path: { project_id: tenant.projectId } },
          body: { display_name: 'Ada' },
        }),
      )
      await ok(
        tenant.keyed.POST('/v1/devices/{device_id}/enroll/member/start', {
          params: { path: { device_id: registered.device_id } },
          body: { member_id: member.member_id },
        }),
      )
      const enrolled = await nextEvent(lines, (event) => event.event === 'enrolled')
      expect(enrolled.member_id).toBe(member.member_id)
      // Nothing secret on stdout: ids and outcomes only.
      expect(lines.join('\n')).not.toMatch(/pvd_|"capture"/)

      const later = syntheticCapture({ identity: enrolled.identity, hand: enrolled.hand, session: 1 })
      const answer = await ok(
        tenant.keyed.POST('/v1/projects/{project_id}/biometrics/identify', {
          params: { path: { project_id: tenant.projectId } },
          body: { palm: { identify_capture: later } },
        }),
      )
      expect(answer).toMatchObject({ status: 'Found', member_id: member.member_id })
    } finally {
      child.kill('SIGINT')
    }
    expect(await exited).toBe(0)
    expect(stderr).not.toMatch(/\n\s+at /)
  }, 90_000)

  it('refuses --project without --credential: one line, exit 2', async () => {
    const result = await runCli(['terminal', '--url', svc.url, '--project', tenant.projectId], { PALMVEIN_CREDENTIAL: undefined })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')[0]).toMatch(/--project and --credential go together/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  }, 30_000)
})
