// The Markdown report of one run: the machine header, the targets with met / missed, the identify
// summary with ratios, REST GETs, load and boot times, and the charts. `renderSummary` is the part
// the README quotes.
import { consoleSection } from './console-section.js'
import { describeRate } from '../../src/domain/accuracy/rates.js'
import type { Rate } from '../../src/domain/accuracy/rates.js'
import { pgvectorSection } from '../pgvector/pgvector-report.js'
import { ms, ratio, table } from './markdown-table.js'
import type { BenchResult, EnvironmentResult, IdentifyLoad, RestLoad } from './result.js'
import { checkTargets, IDENTIFY_P95_ONE_CLIENT_MS, IDENTIFY_SIXTEEN_CLIENTS, REST_GET, TARGET_MEMBERS, verdictMark } from './targets.js'

export const CHART_FILES = {
  p95BySize: 'p95-vs-gallery-size.svg',
  p95ByConcurrency: 'p95-vs-concurrency.svg',
  throughputByConcurrency: 'throughput-vs-concurrency.svg',
} as const

const count = (value: number) => value.toLocaleString('en-US')
const rate = (value: number) => (value < 100 ? value.toFixed(1) : value.toFixed(0))
const seconds = (value: number) => (value < 60 ? `${value.toFixed(1)} s` : `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`)

/** The target a single identify run is judged against, if any (only the 1M-member runs are). */
function identifyVerdict(environment: EnvironmentResult, load: IdentifyLoad): string {
  if (environment.members !== TARGET_MEMBERS) return ''
  if (load.concurrency === 1)
    return load.p95 < IDENTIFY_P95_ONE_CLIENT_MS
      ? `${verdictMark('met')} (p95 < ${IDENTIFY_P95_ONE_CLIENT_MS} ms)`
      : `${verdictMark('missed')} (p95 < ${IDENTIFY_P95_ONE_CLIENT_MS} ms)`
  if (load.concurrency === IDENTIFY_SIXTEEN_CLIENTS.concurrency) {
    const met = load.throughput >= IDENTIFY_SIXTEEN_CLIENTS.minThroughput && load.p95 < IDENTIFY_SIXTEEN_CLIENTS.maxP95Ms
    return `${verdictMark(met ? 'met' : 'missed')} (≥ ${IDENTIFY_SIXTEEN_CLIENTS.minThroughput}/s, p95 < ${IDENTIFY_SIXTEEN_CLIENTS.maxP95Ms} ms)`
  }
  return ''
}

function restVerdict(load: RestLoad): string {
  if (load.targetRate < REST_GET.rate) return ''
  const met = load.p95 < REST_GET.maxP95Ms && load.errors === 0 && load.throughput >= 0.95 * load.targetRate
  return `${verdictMark(met ? 'met' : 'missed')} (p95 < ${REST_GET.maxP95Ms} ms)`
}

/** Identify runs of every environment with two ratios: throughput against the same gallery's
 *  1-client run (how well concurrency scales) and p95 against the smallest gallery's run at the
 *  same concurrency (how latency grows with N). */
export function identifyTable(result: BenchResult): string {
  const smallest = [...result.environments].sort((a, b) => a.members - b.members)[0]
  const rows = result.environments.flatMap((environment) => {
    const single = environment.identify.find((load) => load.concurrency === 1)
    return environment.identify.map((load) => {
      const base = smallest?.identify.find((other) => other.concurrency === load.concurrency)
      return [
        count(environment.members),
        String(load.concurrency),
        rate(load.throughput),
        ms(load.p50),
        ms(load.p95),
        ms(load.p99),
        String(load.errors),
        ratio(single && single.throughput > 0 ? load.throughput / single.throughput : null),
        ratio(base && base !== load && base.p95 > 0 ? load.p95 / base.p95 : null),
        identifyVerdict(environment, load),
      ]
    })
  })
  return table(
    [
      'members',
      'clients',
      'identify/s',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'errors',
      'throughput ÷ 1 client',
      `p95 ÷ ${smallest ? count(smallest.members) : '-'}`,
      'target',
    ],
    rows,
    'rrrrrrrrrl',
  )
}

/** The 1-client runs with the search mode forced, and how much faster two-stage answered (p50). */
export function identifyByModeTable(result: BenchResult): string {
  const rows = result.environments.flatMap((environment) => {
    const runs = environment.identifyByMode ?? []
    const exact = runs.find((load) => load.mode === 'exact')
    return runs.map((load) => [
      load.mode,
      count(environment.members),
      rate(load.throughput),
      ms(load.p50),
      ms(load.p95),
      ms(load.p99),
      String(load.errors),
      ratio(load.mode === 'two_stage' && exact && load.p50 > 0 ? exact.p50 / load.p50 : null),
    ])
  })
  return rows.length
    ? table(['search mode', 'members', 'identify/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'exact p50 ÷ this'], rows, 'lrrrrrrr')
    : 'No runs per search mode in this result.'
}

export function restTable(result: BenchResult): string {
  const rows = result.environments.flatMap((environment) =>
    environment.rest.map((load) => [
      count(environment.members),
      load.route,
      count(load.targetRate),
      rate(load.throughput),
      ms(load.p50),
      ms(load.p95),
      ms(load.p99),
      String(load.errors),
      load.sendLag ? ms(load.sendLag.p95) : '—',
      restVerdict(load),
    ]),
  )
  return table(['members', 'route', 'target req/s', 'achieved req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'sent late p95 ms', 'target'], rows, 'rlrrrrrrrl')
}

export function targetsTable(result: BenchResult): string {
  return table(
    ['target', 'measured', 'verdict'],
    checkTargets(result).map((check) => [check.target, check.measured, verdictMark(check.verdict)]),
    'lll',
  )
}

/** What the README quotes: targets, then the identify summary. */
export function renderSummary(result: BenchResult): string {
  return `${targetsTable(result)}\n\n${identifyTable(result)}\n`
}

function machineSection(result: BenchResult): string {
  const { machine, options } = result
  const rows: string[][] = [
    ['CPU', machine.cpuModel],
    ['cores', `${machine.physicalCores ?? '?'} physical, ${machine.logicalCpus} logical (shared by the service, the load generator and the seeder)`],
    ['SIMD', machine.simd.length ? machine.simd.join(', ') : 'unknown'],
    ['memory', `${machine.memoryGiB} GiB`],
    ['OS', machine.os],
    ['Node', machine.node],
    ['matcher', machine.matcher ? `${machine.matcher.backend} (${machine.matcher.isa})` : 'unknown'],
    ['database', options.database === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'],
    [
      'run',
      `${options.quick ? 'quick' : 'full'}; sizes ${options.sizes.map(count).join(', ')}; ${options.durationSeconds} s per load${options.warmupSeconds === undefined ? '' : ` after ${options.warmupSeconds} s warm-up`}; clients ${options.concurrency.join(', ')}; REST at ${count(options.restRate)} req/s; seed ${options.seed}; ${options.storeCaptures ? 'captures and references stored' : 'reference templates stored (no captures)'}`,
    ],
  ]
  if (machine.loadAverage) {
    const format = (values: number[]) => values.map((value) => value.toFixed(2)).join(' / ')
    rows.push([
      'load average',
      `${format(machine.loadAverage.before)} before, ${format(machine.loadAverage.after)} after (1 / 5 / 15 min; above ${machine.logicalCpus} means other work competed for the CPUs)`,
    ])
  }
  return table(['', ''], rows, 'll')
}

function environmentsTable(result: BenchResult): string {
  return table(
    ['members', 'gallery rows', 'import', 'members/s', 'boot (decrypt + gallery)', 'rows/s', 'service RSS'],
    result.environments.map((environment) => [
      count(environment.members),
      count(environment.galleryRows),
      seconds(environment.seed.seconds),
      count(Math.round(environment.seed.membersPerSecond)),
      seconds(environment.boot.seconds),
      count(Math.round(environment.boot.rowsPerSecond)),
      environment.serviceRssMiB === null ? '' : `${count(Math.round(environment.serviceRssMiB))} MiB`,
    ]),
    'rrrrrrr',
  )
}

function accuracyTable(result: BenchResult): string {
  const rows = result.environments.flatMap((environment) =>
    environment.identify.map((load) => [
      count(environment.members),
      String(load.concurrency),
      load.matedProbes ? `${((100 * load.matedCorrect) / load.matedProbes).toFixed(1)} % of ${count(load.matedProbes)}` : '',
      load.nonMatedProbes ? `${count(load.nonMatedFound)} of ${count(load.nonMatedProbes)}` : '',
      Object.entries(load.outcomes)
        .map(([status, number]) => `${status} ${count(number)}`)
        .join(', '),
    ]),
  )
  return table(['members', 'clients', 'mated probes found (right member)', 'non-mated probes found (false match)', 'answers'], rows, 'rrrrl')
}

/** The DET chart of one environment's accuracy pass. */
export const detChartFile = (members: number) => `det-${members}.svg`

function accuracySection(result: BenchResult): string {
  const measured = result.environments.filter((environment) => environment.accuracy)
  if (!measured.length) return 'No accuracy pass in this run.'
  const describe = (rate: Rate | null) => (rate ? describeRate(rate) : '')
  const rows = measured.map((environment) => {
    const accuracy = environment.accuracy!
    const point = (target: number) => {
      const found = accuracy.points.find((entry) => entry.target_fpir === target)
      return !found ? '' : found.threshold === null ? (found.note ?? 'not measurable') : `${describe(found.fnir)} (T = ${found.threshold.toFixed(3)})`
    }
    const { misses } = accuracy
    return [
      count(environment.members),
      `${count(accuracy.matedProbes)} / ${count(accuracy.nonMatedProbes)}`,
      `FNIR ${describe(accuracy.atThreshold.fnir)}; FPIR ${describe(accuracy.atThreshold.fpir)}`,
      point(3e-3),
      point(1e-4),
      accuracy.eer ? `${(accuracy.eer.rate * 100).toPrecision(3)} % (T = ${accuracy.eer.threshold.toFixed(3)})` : '',
      misses.total ? `${misses.total}: ${misses.hard} hard, ${misses.related} look-alike, ${misses.other} other` : 'none',
    ]
  })
  return [
    "Open-set identification per ISO/IEC 19795-1 at each gallery size N: every probe identified once more with `?k=10`. FNIR(T): mated probes whose top-1 member is not theirs or scores below T; FPIR(T): non-mated probes whose top-1 scores at least T. 95 % Wilson intervals; a target the sample cannot resolve says so. Misses are mated probes not Found as their member at the environment's threshold, by what the generator made of the identity: hard identities have twice the capture noise, look-alikes resemble an earlier identity. `palmvein eval` gives the full report (docs/accuracy.md).",
    '',
    table(
      [
        'members',
        'mated / non-mated probes',
        `at threshold ${measured[0].accuracy!.threshold.toFixed(2)}`,
        'FNIR at FPIR 3e-3',
        'FNIR at FPIR 1e-4',
        'EER',
        'misses explained',
      ],
      rows,
      'rrlllll',
    ),
    '',
    calibrationTable(measured),
    '',
    ...measured.map((environment) => `![DET at ${count(environment.members)} members](${detChartFile(environment.members)})`),
  ].join('\n')
}

/** The service's calibration of its threshold for a target FPIR, against what the probes show there. */
function calibrationTable(measured: EnvironmentResult[]): string {
  const checked = measured.filter((environment) => environment.accuracy!.calibration)
  if (!checked.length)
    return "The service's calibration for a target FPIR was not measured: it samples the members' stored captures, and this run seeded references only (a run from before the benchmark imported its members)."

  const percent = (rate: number) => `${(rate * 100).toPrecision(2)} %`
  const rows = checked.map((environment) => {
    const calibration = environment.accuracy!.calibration!
    const { estimatedFpir: estimate } = calibration
    return [
      count(environment.members),
      `${calibration.threshold.toFixed(3)} (${calibration.method.replace('_', '-')}, ${count(calibration.samples)} samples, ${seconds(calibration.seconds)})`,
      `${percent(estimate.rate)} [${percent(estimate.low)}, ${percent(estimate.high)}]`,
      describeRate(calibration.measuredFpir),
      describeRate(calibration.fnir),
      calibration.probesThreshold === null ? 'not measurable' : calibration.probesThreshold.toFixed(3),
    ]
  })
  return [
    `The service's own calibration (\`PATCH\` the environment's \`target_fpir\` to ${checked[0].accuracy!.calibration!.targetFpir}, then \`GET …/accuracy\`): the threshold it derived from its members' stored captures, checked with the pass's non-mated probes, which it never saw.`,
    '',
    table(['members', 'calibrated threshold', 'its estimated FPIR', 'FPIR of the probes there', 'FNIR there', "the probes' own threshold"], rows, 'rllllr'),
  ].join('\n')
}

function matcherSection(result: BenchResult): string {
  const { matcher } = result
  if (matcher.status === 'skipped') return 'Skipped (`--skip-matcher`).'
  const file = matcher.resultFile ? ` Its full result is in [${matcher.resultFile}](${matcher.resultFile}).` : ''
  const note = matcher.note ? ` ${matcher.note}` : ''
  const intro =
    matcher.status === 'ok'
      ? `\`npm run bench:matcher\` ran first (${seconds(matcher.seconds)}): one 1:N scan per engine, against the memory-bandwidth floor (reading the gallery once), usearch's exact search and FAISS (exact int8 scan for exact engines, its 1-bit scan for two-stage) over the same rows.${file}${note}`
      : `\`npm run bench:matcher\` failed after ${seconds(matcher.seconds)}.${note}`
  if (!matcher.rows?.length) return intro
  const rows = matcher.rows.map((row) => [
    count(row.rows),
    String(row.dimension),
    row.engine,
    String(row.threads),
    String(row.batch),
    row.medianMs.toFixed(3),
    row.perProbeMs.toFixed(3),
    ratio(row.vsFloor ?? null),
    ratio(row.vsUsearch ?? null),
    ratio(row.vsFaiss ?? null),
    ratio(row.vsJs ?? null),
  ])
  const faissNote = matcher.rows.some((row) => row.engine.startsWith('faiss:'))
    ? ''
    : "\n\nFAISS was not measured in this run (no Python with faiss-cpu; the matcher benchmark's output says why)."
  return `${intro}\n\n${table(['rows', 'd', 'engine', 'threads', 'batch', 'median ms', 'ms per probe', '÷ floor', '× usearch', '× faiss', '× js'], rows, 'rrlrrrrrrrr')}${faissNote}`
}

export function renderMarkdown(result: BenchResult): string {
  return [
    `# palmvein benchmark, ${result.startedAt}`,
    '',
    machineSection(result),
    '',
    '## Targets',
    '',
    'Judged on this run; the benchmark reports them and never fails on them.',
    '',
    targetsTable(result),
    '',
    '## Identify under load',
    '',
    '`POST /v1/projects/{project_id}/biometrics/identify` through the real service (a separate process), closed loop: each client sends its next probe when the previous answer arrives. Probes mix mated captures (a new capture of an enrolled palm) and non-mated ones (palms never enrolled). Latency is measured by the client, so it includes HTTP, JSON, authentication, the rate-limit counter and the scan.',
    '',
    identifyTable(result),
    '',
    "The same single client with the environment's `search_mode` forced to each mode (the runs above use the default, `auto`, which picks the mode by the gallery's row count):",
    '',
    identifyByModeTable(result),
    '',
    '## REST GETs',
    '',
    'Open loop at a fixed rate (requests are sent on schedule whether or not earlier ones have answered, so a slow server shows up as latency, not as a lower rate). Latency counts from when a request was due; "sent late" is how long after that the generator handed it over, its own error, included in the latencies.',
    '',
    result.environments.some((environment) => environment.rest.length) ? restTable(result) : 'No REST runs.',
    '',
    '## Loading the environments',
    '',
    "Import: a separate process generates the synthetic members (two hands each) as NDJSON, then loads them with `palmvein import` (the CLI: every capture checked as enrollment checks it, each member sealed under its own data key, written in batches; members whose two captures disagree are captured again, as a terminal would, in further passes); members/s is the first pass's (nearly every member), the time all passes together. Boot: the service starts, decrypts every reference template and builds the galleries, as in production.",
    '',
    environmentsTable(result),
    '',
    '## Identification outcomes',
    '',
    accuracyTable(result),
    '',
    '## Accuracy',
    '',
    accuracySection(result),
    '',
    '## Matcher',
    '',
    matcherSection(result),
    '',
    '## Console',
    '',
    consoleSection(result, table),
    '',
    '## PostgreSQL + pgvector, the peer users would build instead',
    '',
    pgvectorSection(result.pgvector),
    '',
    '## Charts',
    '',
    `![identify p95 against gallery size](${CHART_FILES.p95BySize})`,
    '',
    `![identify p95 against concurrency](${CHART_FILES.p95ByConcurrency})`,
    '',
    `![identify throughput against concurrency](${CHART_FILES.throughputByConcurrency})`,
    '',
  ].join('\n')
}
