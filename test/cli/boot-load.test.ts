// A restart loads a gallery of thousands of rows: with the native batch cipher on the main thread,
// and with node:crypto (no native code) on threads of its own (decrypt-pool.ts, from 4 096 rows)
// or on the main thread. The members imported before are identified after each.
import { describe, expect, it } from 'vitest'
import type { Config } from '../../src/config.js'
import { createSyntheticPopulation, DEMO_CAPTURES } from '@palmvein/matcher'
import { useCliTenant } from '../support/cli-tenant.js'
import { base64url, identify, identifyBody, waitUntilReady } from '../support/palms.js'
import { runCli } from '../support/process.js'

const MEMBERS = 2_100
const palms = createSyntheticPopulation({ seed: 23, dimension: 256, identities: MEMBERS, ...DEMO_CAPTURES })
const memberId = (identity: number) => `0190a6b2-0000-7000-8000-${String(identity).padStart(12, '0')}`

describe('boot load of a large gallery', () => {
  const cli = useCliTenant('boot-admin@example.com')

  it('identifies every sampled member after restarts that decrypt natively, on threads and on the main thread', async () => {
    const capture = (identity: number, hand: 'left' | 'right', attempt: number) => base64url(palms.template(identity, hand, 0, attempt, { quality: 90 }))
    const lines = Array.from({ length: MEMBERS }, (_, identity) =>
      JSON.stringify({
        member_id: memberId(identity),
        display_name: `P${identity}`,
        left_hand: { enroll_capture: capture(identity, 'left', 0), identify_capture: capture(identity, 'left', 1) },
        right_hand: { enroll_capture: capture(identity, 'right', 0), identify_capture: capture(identity, 'right', 1) },
      }),
    )
    const { svc, tenant, env } = cli
    const file = await cli.writeLines('members.ndjson', lines)
    const imported = await runCli(['import', '--project', tenant.projectId, '--allow-duplicates', file], env)
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: MEMBERS, rejected: 0 })

    const sample = [0, 1, 777, 1500, MEMBERS - 1]
    const answers = async () =>
      Promise.all(
        sample.flatMap((identity) =>
          (['left', 'right'] as const).map(async (hand) => {
            const answer = await identify(svc, tenant, identifyBody(palms, identity, hand))
            return [answer.status, answer.member_id, answer.hand]
          }),
        ),
      )
    const expected = sample.flatMap((identity) => ['left', 'right'].map((hand) => ['Found', memberId(identity), hand]))
    const restarts: Array<Partial<Config>> = [{}, { matcherBackend: 'wasm', bootDecryptThreads: 2 }, { matcherBackend: 'wasm', bootDecryptThreads: 0 }]
    for (const config of restarts) {
      await svc.restart(config)
      await waitUntilReady(svc.url, 60_000)
      expect(await answers()).toEqual(expected)
    }
  }, 180_000)
})
