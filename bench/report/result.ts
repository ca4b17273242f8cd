// The shape of one `npm run bench` run, as written to bench/results/<timestamp>/results.json and
// read back by the report writer. Every latency is in milliseconds, every rate per second.
// Bump RESULT_VERSION when a field changes meaning, so old recorded results are not misread.
import type { OperatingPoint } from '../../src/domain/accuracy/report.js'
import type { Rate } from '../../src/domain/accuracy/rates.js'
import type { ResultRow } from '../../packages/matcher/bench/matcher-report.js'
import type { PeerResult } from '../pgvector/pgvector-peer.js'

export const RESULT_VERSION = 1

export interface MachineInfo {
  cpuModel: string
  /** Physical cores when /proc/cpuinfo says, else null. */
  physicalCores: number | null
  logicalCpus: number
  /** SIMD features relevant to the int8 kernels (sse4_2, avx2, avx512_vnni, asimd, ...). */
  simd: string[]
  memoryGiB: number
  os: string
  node: string
  /** The matcher backend and ISA the service uses on this machine (e.g. native / avx2). */
  matcher: { backend: string; isa: string } | null
  /** 1, 5 and 15 minute load averages before and after the run: other work on the machine skews every figure. */
  loadAverage?: { before: number[]; after: number[] }
}

export interface LatencySummary {
  /** Completed requests with a 2xx answer. */
  requests: number
  /** Non-2xx answers, timeouts and connection errors. */
  errors: number
  durationSeconds: number
  /** Successful requests per second over the measured window. */
  throughput: number
  p50: number
  p95: number
  p99: number
  max: number
}

export interface IdentifyLoad extends LatencySummary {
  concurrency: number
  /** Answers by status among the successful requests: Found / NotFound / Ambiguous. */
  outcomes: Record<string, number>
  /** Mated probes answered Found with the right member, and non-mated probes answered Found (false match). */
  matedProbes: number
  matedCorrect: number
  nonMatedProbes: number
  nonMatedFound: number
}

/** A 1-client identify run with the environment's search mode forced (PATCH search_mode). */
export interface ModeIdentifyLoad extends IdentifyLoad {
  mode: 'exact' | 'two_stage'
}

export interface RestLoad extends LatencySummary {
  /** Route template, e.g. GET /v1/projects/{project_id}/members?per_page=20. */
  route: string
  /** Open-loop target rate (requests per second). */
  targetRate: number
  /** How late the generator sent requests after their due time (ms; absent in older results): part of every latency. */
  sendLag?: { p50: number; p95: number; p99: number } | null
}

export interface EnvironmentResult {
  /** Enrolled members (two hands each, so the gallery has 2 × members rows). */
  members: number
  galleryRows: number
  /** Components per gallery row (absent in results before it was recorded: they were all 256). */
  dimension?: number
  /** `palmvein import` of the members (every pass), before the service starts; the rate is its first pass's (older results: a bulk load's). */
  seed: { seconds: number; membersPerSecond: number }
  /** Service start until it answers /healthz with the gallery loaded (decrypting every template). */
  boot: { seconds: number; rowsPerSecond: number }
  /** Resident memory of the service process 2 s after boot (its load garbage released), MiB (null when unknown). */
  serviceRssMiB: number | null
  identify: IdentifyLoad[]
  /** 1-client identify per forced search mode (absent in results recorded before it was measured). */
  identifyByMode?: ModeIdentifyLoad[]
  rest: RestLoad[]
  /** The accuracy pass (bench/service/accuracy.mjs); absent in results recorded before it. */
  accuracy?: AccuracyResult
}

export interface AccuracyResult {
  matedProbes: number
  nonMatedProbes: number
  /** The environment's match threshold. */
  threshold: number
  atThreshold: { fnir: Rate; fpir: Rate }
  /** FNIR at each target FPIR (threshold null: not measurable with this many non-mated probes). */
  points: OperatingPoint[]
  eer: { threshold: number; rate: number } | null
  det: Array<{ threshold: number; fpir: number; fnir: number }>
  /** Mated probes not Found as their member at the threshold, by what the generator made of the identity. */
  misses: { total: number; hard: number; related: number; other: number }
  /** The service's own calibration for a target FPIR, checked with the non-mated probes (absent before it was measured). */
  calibration?: CalibrationCheck
}

export interface CalibrationCheck {
  targetFpir: number
  /** The threshold the service derived, its method and sample (GET …/accuracy). */
  threshold: number
  method: 'empirical' | 'extreme_value'
  samples: number
  estimatedFpir: { rate: number; low: number; high: number }
  /** From PATCH target_fpir until the accuracy endpoint said calibrated. */
  seconds: number
  /** The non-mated probes' FPIR and the mated probes' FNIR at that threshold. */
  measuredFpir: Rate
  fnir: Rate
  /** The threshold the probes alone give for the target (null: too few non-mated probes). */
  probesThreshold: number | null
}

export interface MatcherPhase {
  /** 'ok', 'skipped' (flag) or 'failed' (the matcher benchmark exited with an error). */
  status: 'ok' | 'skipped' | 'failed'
  seconds: number
  /** The matcher benchmark's own JSON document, when it wrote one. */
  resultFile: string | null
  note: string | null
  /** The matcher benchmark's rows (its own format: packages/matcher/bench/matcher-report.ts ResultRow). */
  rows?: MatcherRow[]
}

/** The fields of a matcher benchmark row (packages/matcher/bench/matcher-report.ts) that the report shows. */
export type MatcherRow = Pick<
  ResultRow,
  'rows' | 'dimension' | 'engine' | 'batch' | 'threads' | 'medianMs' | 'perProbeMs' | 'vsFloor' | 'vsUsearch' | 'vsFaiss' | 'vsJs'
>

export interface BenchOptions {
  quick: boolean
  sizes: number[]
  durationSeconds: number
  warmupSeconds?: number
  /** A request unanswered this long counts as an error. */
  timeoutSeconds?: number
  concurrency: number[]
  restRate: number
  database: 'embedded' | 'postgres'
  seed: number
  /** Whether the bulk load also stored each member's encrypted captures (default: references only). */
  storeCaptures?: boolean
}

/** The web console's first visit (bench/service/console-load.mjs). */
export type ConsoleResult =
  | { skipped: string }
  | {
      skipped?: undefined
      files: Array<{ name: string; bytes: number; gzipBytes: number }>
      mainGzipBytes: number
      firstLoadMs: number[]
      firstLoadMedianMs: number
    }
export type PgvectorPhase = { status: 'skipped'; reason: string } | { status: 'ok'; sizes: (PeerResult | { members: number; error: string })[] }

export interface BenchResult {
  version: number
  startedAt: string
  finishedAt: string
  machine: MachineInfo
  options: BenchOptions
  matcher: MatcherPhase
  environments: EnvironmentResult[]
  /** Absent in results older than the console phase, and with --skip-console. */
  console?: ConsoleResult
  /** The PostgreSQL + pgvector peer (bench/pgvector); absent in runs before it was measured. */
  pgvector?: PgvectorPhase
}
