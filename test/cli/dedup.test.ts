// `palmvein dedup` through the real CLI: related identities planted by the synthetic generator
// (imported with --allow-duplicates, as enroll would refuse them) come back as pairs with their
// scores, and nothing else does.
import { beforeAll, describe, expect, it } from 'vitest'
import { createSyntheticPopulation, DEMO_CAPTURES } from '@palmvein/matcher'
import { useCliTenant } from '../support/cli-tenant.js'
import { base64url, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'

// More palms than one page of the report (2 048): the second page is searched while the first is read.
const IDENTITIES = 1_100
const palms = createSyntheticPopulation({ seed: 11, dimension: 256, identities: IDENTITIES, ...DEMO_CAPTURES, relatedFraction: 0.25, relatedSimilarity: 0.97 })
const memberId = (identity: number) => `0190a6b2-0000-7000-8000-${String(identity).padStart(12, '0')}`

/** Identities joined by relatedTo links: every member of a family looks like every other. */
function familyOf(identity: number): number {
  let current = identity
  while (palms.profile(current).relatedTo !== null) current = palms.profile(current).relatedTo!
  return current
}

describe('palmvein dedup', () => {
  const cli = useCliTenant('dedup-admin@example.com')
  let tenant: PalmTenant, env: Record<string, string | undefined>
  beforeAll(() => ({ tenant, env } = cli))

  it('reports exactly the planted look-alike pairs at or above the threshold, best first', async () => {
    const lines = Array.from({ length: IDENTITIES }, (_, identity) =>
      JSON.stringify({
        member_id: memberId(identity),
        display_name: `Person ${identity}`,
        left_hand: {
          enroll_capture: base64url(palms.template(identity, 'left', 0, 0, { quality: 90 })),
          identify_capture: base64url(palms.template(identity, 'left', 0, 1, { quality: 90 })),
        },
        right_hand: {
          enroll_capture: base64url(palms.template(identity, 'right', 0, 0, { quality: 90 })),
          identify_capture: base64url(palms.template(identity, 'right', 0, 1, { quality: 90 })),
        },
      }),
    )
    const file = await cli.writeLines('family.ndjson', lines)
    const imported = await runCli(['import', '--project', tenant.projectId, '--allow-duplicates', file], env)
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: IDENTITIES, rejected: 0 })

    const result = await runCli(['dedup', '--environment', tenant.environmentId, '--threshold', '0.6'], env)
    expect(result.code).toBe(0)
    const pairs = result.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
    expect(result.stderr).toMatch(new RegExp(`${pairs.length} pair\\(s\\) at or above 0.6 among ${2 * IDENTITIES} palm\\(s\\)`))
    const planted = Array.from({ length: IDENTITIES }, (_, identity) => identity).filter((identity) => palms.profile(identity).relatedTo !== null)
    expect(planted.length).toBeGreaterThan(3)
    const key = (a: string, b: string) => [a, b].sort().join('/')
    const reported = new Set(pairs.map((pair) => key(pair.member_a, pair.member_b)))
    for (const identity of planted) expect(reported).toContain(key(memberId(identity), memberId(palms.profile(identity).relatedTo!)))
    const identityOf = (id: string) => Number(id.slice(-12))
    for (const pair of pairs) {
      expect(familyOf(identityOf(pair.member_a))).toBe(familyOf(identityOf(pair.member_b)))
      expect(pair.member_a < pair.member_b).toBe(true)
      expect(pair.hand_a).toBe(pair.hand_b)
      expect(pair.score).toBeGreaterThanOrEqual(0.6)
    }
    expect(pairs.map((pair) => pair.score)).toEqual([...pairs.map((pair) => pair.score)].sort((a, b) => b - a))
  }, 120_000) // two CLI processes, each opening the database (the import and the dedup)

  it('refuses a bad threshold or an unknown environment with exit 2', async () => {
    const bad = await runCli(['dedup', '--environment', tenant.environmentId, '--threshold', 'high'], env)
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/option '--threshold <t>' argument 'high' is invalid. it must be a number in \(0, 1\]/)])
    const unknown = await runCli(['dedup', '--environment', '0190a6b2-0000-7000-8000-ffffffffffff'], env)
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/environment 0190a6b2-0000-7000-8000-ffffffffffff not found/)])
  })
})
