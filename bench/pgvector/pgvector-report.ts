// The report's pgvector section: per size, every mode of palmvein and of pgvector side by side
// (index build, recall and decision agreement against pgvector's exact scan, p50/p95 per client
// count with the load average at the time), and palmvein's latency as a ratio of each mode's.
import { ms, table } from '../report/markdown-table.js'
import type { PgvectorPhase } from '../report/result.js'
import type { ModeResult, PeerResult } from './pgvector-peer.js'

const percent = (value: number) => `${(100 * value).toFixed(value === 1 ? 0 : 2)} %`
/** Two significant digits: palmvein is often hundreds of times faster, and 0.00× would hide by how much. */
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toPrecision(2)}×` : '')
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`

const latencyAt = (mode: ModeResult, clients: number) => mode.latency.find((row) => row.clients === clients)

/** palmvein's fastest mode that decides as the exact scan does on every probe (exact always does). */
export function palmveinReference(result: PeerResult, clients: number): ModeResult {
  const agreeing = result.modes.filter((mode) => mode.engine === 'palmvein' && mode.agreement?.decisionAgreement === 1 && latencyAt(mode, clients)?.p50 != null)
  return agreeing.reduce((best, mode) => ((latencyAt(mode, clients)?.p50 ?? Infinity) < (latencyAt(best, clients)?.p50 ?? Infinity) ? mode : best))
}

function sizeSection(result: PeerResult): string {
  const clients = [...new Set(result.modes.flatMap((mode) => mode.latency.map((row) => row.clients)))].sort((a, b) => a - b)
  const references = new Map(clients.map((count) => [count, palmveinReference(result, count)]))
  const rows = result.modes.map((mode) => {
    const build =
      mode.build === null ? ['', ''] : 'unfinished' in mode.build ? [mode.build.unfinished, ''] : [`${mode.build.seconds.toFixed(1)} s`, mib(mode.build.bytes)]
    const cells = clients.flatMap((count) => {
      const own = latencyAt(mode, count)
      const reference = latencyAt(references.get(count)!, count)
      return [
        own ? `${ms(own.p50)} / ${ms(own.p95)}` : 'n/a',
        own ? own.perSecond.toFixed(0) : '',
        own && reference && mode.engine === 'pgvector' ? `${ratio(reference.p50! / own.p50!)} / ${ratio(reference.p95! / own.p95!)}` : '',
        own ? own.loadAverage.toFixed(1) : '',
      ]
    })
    return [
      `${mode.engine} ${mode.mode}`,
      mode.describe,
      ...build,
      mode.agreement ? percent(mode.agreement.recall) : '',
      mode.agreement ? percent(mode.agreement.decisionAgreement) : '',
      ...cells,
    ]
  })
  const header = [
    'engine, mode',
    'what',
    'index build',
    'index',
    `recall@${result.k}`,
    'decisions',
    ...clients.flatMap((count) => [`${count} cl. p50 / p95 ms`, 'per s', 'palmvein ÷ this', 'load']),
  ]
  const reference = clients.map((count) => `${count} client${count === 1 ? '' : 's'}: palmvein ${references.get(count)!.mode}`).join('; ')
  return [
    `### ${result.members.toLocaleString('en-US')} members (${result.rows.toLocaleString('en-US')} rows, d = ${result.dimension})`,
    '',
    `${result.probes.toLocaleString('en-US')} probes (half mated); table loaded by COPY in ${result.loadSeconds.toFixed(1)} s, ${mib(result.tableBytes)} with TOAST and primary key. ` +
      `pgvector's exact scan decides as palmvein's exact scan on ${percent(result.exactVsPalmveinExact.decisionAgreement)} of probes (recall@${result.k} ${percent(result.exactVsPalmveinExact.recall)}; float32 against int8 scores). ` +
      `"palmvein ÷ this" is palmvein's p50 / p95 over the mode's, palmvein in its fastest mode at 100 % decision agreement (${reference}): below 1× palmvein is faster.`,
    '',
    table(header, rows, `ll${'r'.repeat(header.length - 2)}`),
  ].join('\n')
}

export function pgvectorSection(phase: PgvectorPhase | undefined): string {
  if (!phase) return 'Not measured in this run (the run predates the pgvector peer).'
  if (phase.status === 'skipped') return `pgvector: skipped (${phase.reason}).`
  const intro =
    "The same members (both palms each, as enrolled) and probes, in the same run: palmvein's matcher in process (the gallery the service's identify searches), pgvector through the `postgres` client over loopback TCP (prepared statements, one round trip a query). Rows are stored as `vector(D)`: the int8 template L2-normalised, so `<#>` is minus the cosine palmvein scores. Recall and decisions are against pgvector's exact scan (decision: Found with the same member / Ambiguous / NotFound, by the service's `decide` at threshold 0.80, margin 0.03). One index on the table at a time; N clients are closed loops (each sends its next probe when the last answered). The load average (1 min) is the machine's when each figure was taken: other work shares its cores."
  return [
    intro,
    ...phase.sizes.map((size) => ('error' in size ? `### ${size.members.toLocaleString('en-US')} members\n\nNot measured: ${size.error}` : sizeSection(size))),
  ].join('\n\n')
}
