// `palmvein import` without --allow-duplicates, its duplicate-palm search through the cell index
// (`--duplicate-search cells`, reading a third of the cells) against the exact scan
// (`--duplicate-search exact`): two environments hold the same register, the same candidates are
// imported into each (members enrolled again, look-alike palms just above and just below the
// threshold, new people, and lines repeating earlier lines of the file), and every line gets the
// same verdict: imported, or refused with the same hand and score.
import { readFile } from 'node:fs/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeTemplate } from '@palmvein/matcher'
import { createPlantedRegister } from '../../bench/dedup-register.js'
import { useCliTenant } from '../support/cli-tenant.js'
import { addProject, base64url, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'

const BASE = 1_500
const PLANTED = 120
const NEW_PEOPLE = 120
const THRESHOLD = 0.8
const stored = createPlantedRegister({ seed: 31, dimension: 256, base: BASE, duplicates: PLANTED, lookAlikes: PLANTED, threshold: THRESHOLD })
const strangers = createPlantedRegister({ seed: 32, dimension: 256, base: NEW_PEOPLE, duplicates: 0, lookAlikes: 0, threshold: THRESHOLD })

const capture = (vector: Float32Array) => base64url(encodeTemplate({ vector, extractorId: 1, extractorVersion: 1, quality: 90 }))
const line = (name: string, left: Float32Array, right: Float32Array) => ({
  display_name: name,
  left_hand: { enroll_capture: capture(left), identify_capture: capture(left) },
  right_hand: { enroll_capture: capture(right), identify_capture: capture(right) },
})

/** Planted members (enrolled again, look-alikes), new people and repeats of earlier lines, interleaved. */
function candidates() {
  const lines = []
  for (let index = 0; index < PLANTED * 2; index++) {
    const member = BASE + index
    lines.push(line(`planted ${member}`, stored.palm(member, 0), stored.palm(member, 1)))
    if (index < NEW_PEOPLE) lines.push(line(`new ${index}`, strangers.palm(index, 0), strangers.palm(index, 1)))
    // Every fourth new person again, further down the file (another batch).
    if (index >= 40 && index % 4 === 0) lines.push(line(`new ${index - 40} again`, strangers.palm(index - 40, 0), strangers.palm(index - 40, 1)))
  }
  return lines
}

const rejectsOf = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text))

describe('palmvein import: the cell index decides duplicates as the exact search does', () => {
  const cli = useCliTenant('import-search@example.com')
  let tenant: PalmTenant, env: Record<string, string | undefined>
  let projects: string[]
  beforeAll(async () => {
    ;({ tenant, env } = cli)
    const other = await addProject(cli.svc, tenant)
    projects = [tenant.projectId, other.projectId]
    const register = await cli.writeLines(
      'register.ndjson',
      Array.from({ length: BASE }, (_, member) => line(`stored ${member}`, stored.palm(member, 0), stored.palm(member, 1))),
    )
    for (const project of projects) {
      const imported = await runCli(['import', '--project', project, '--allow-duplicates', register], env)
      expect(JSON.parse(imported.stdout)).toMatchObject({ imported: BASE, rejected: 0 })
    }
  }, 240_000)

  it('refuses the same lines with the same hand and score, and imports the rest', async () => {
    const file = await cli.writeLines('candidates.ndjson', candidates())
    const runs = []
    for (const [index, how] of [
      ['--duplicate-search', 'exact'],
      ['--duplicate-search', 'cells', '--cell-probes', '4'],
    ].entries()) {
      const rejects = cli.file(`rejects-${index}.ndjson`)
      const result = await runCli(['import', '--project', projects[index], ...how, '--batch', '50', '--rejects', rejects, file], env)
      expect(result.code).toBe(1)
      const { seconds: _seconds, ...summary } = JSON.parse(result.stdout)
      runs.push({ summary, rejects: await rejectsOf(rejects) })
    }
    const [exact, cells] = runs
    expect(cells.rejects).toEqual(exact.rejects)
    expect(cells.summary).toEqual(exact.summary)
    // The planted re-enrollments, the look-alikes above the threshold and the repeated lines are refused.
    const refused = new Set(exact.rejects.filter((rejection) => rejection.code === 'duplicate_palm').map((rejection) => rejection.line))
    const names = candidates().map((entry) => entry.display_name)
    const refusedOf = (prefix: string) => names.filter((name, index) => name.startsWith(prefix) && refused.has(index + 1)).length
    expect(exact.summary.rejected).toBe(refused.size)
    expect(names.filter((name) => name.endsWith('again')).every((name) => refused.has(names.indexOf(name) + 1))).toBe(true)
    expect(names.filter((name, index) => name.startsWith('new') && !name.endsWith('again') && refused.has(index + 1))).toEqual([])
    expect(refusedOf('planted')).toBeGreaterThan(PLANTED)
    expect(refusedOf('planted')).toBeLessThan(PLANTED * 2)
  }, 240_000)
})
