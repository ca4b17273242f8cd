// The evaluation's report: report.json (for other tools), report.md (for people). Every rate comes
// with its 95 % interval, and a target the sample cannot measure says so.
import type { EvalOutcome, EvalSettings } from './evaluate.js'
import { cmc, detCurve, equalErrorRate, fnirAt, fpirAt, thresholdForFpir, type OpenSetScores } from './open-set.js'
import { describeRate, smallestMeasurableRate, type Rate } from './rates.js'

/** The spec's figures: FAR below 0.00001 %, FRR below 0.01 %. */
export const SPEC_FIGURES = { fpir: 1e-7, fnir: 1e-4 } as const
export const DEFAULT_TARGET_FPIRS = [1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
const DET_POINTS = 400
const HISTOGRAM_BINS = 50

export interface OperatingPoint {
  target_fpir: number
  /** Null when the sample has too few non-mated probes to measure the target. */
  threshold: number | null
  fpir: Rate | null
  fnir: Rate | null
  note?: string
}

export interface AccuracyReport {
  gallery_size: number
  gallery_references: number
  mated_probes: number
  non_mated_probes: number
  dimension: number
  settings: { match_threshold: number; margin: number; search_mode: string }
  smallest_measurable: { fpir: number; fnir: number }
  at_match_threshold: { threshold: number; fpir: Rate; fnir: Rate; decisions: EvalOutcome['decisions'] }
  operating_points: OperatingPoint[]
  spec_figures: {
    fpir_target: number
    fnir_target: number
    threshold_for_fpir: number | null
    fnir_there: Rate | null
    fnir_at_match_threshold: Rate
    note: string
  }
  det: Array<{ threshold: number; fpir: number; fnir: number }>
  /** Where FNIR = FPIR on the DET curve (null without both kinds of probe). */
  eer: { threshold: number; rate: number } | null
  cmc: Array<{ rank: number; rate: number }>
  score_histograms: { bins: number[]; mated_top1: number[]; non_mated_top1: number[] }
}

/** The lowest threshold for `target` FPIR and the rates there, or why the sample cannot say. */
export function operatingPoint(scores: OpenSetScores, target: number): OperatingPoint {
  const threshold = thresholdForFpir(scores, target)
  if (threshold === null) {
    return {
      target_fpir: target,
      threshold: null,
      fpir: null,
      fnir: null,
      note: `not measurable with ${scores.nonMated.length} non-mated probes (needs at least ${Math.ceil(1 / target)})`,
    }
  }
  return { target_fpir: target, threshold, fpir: fpirAt(scores, threshold), fnir: fnirAt(scores, threshold) }
}

/** At most `count` points of the curve, evenly spread over it (its ends kept). */
export function thin<T>(points: T[], count: number): T[] {
  if (points.length <= count) return points
  return Array.from({ length: count }, (_, index) => points[Math.round((index * (points.length - 1)) / (count - 1))])
}

function histogram(scores: number[]): number[] {
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0)
  for (const score of scores) counts[Math.min(HISTOGRAM_BINS - 1, Math.max(0, Math.floor(score * HISTOGRAM_BINS)))] += 1
  return counts
}

export function buildReport(outcome: EvalOutcome, settings: EvalSettings, targets: number[] = DEFAULT_TARGET_FPIRS): AccuracyReport {
  const spec = operatingPoint(outcome, SPEC_FIGURES.fpir)
  return {
    gallery_size: outcome.gallerySubjects,
    gallery_references: outcome.galleryReferences,
    mated_probes: outcome.mated.length,
    non_mated_probes: outcome.nonMated.length,
    dimension: outcome.dimension,
    settings: { match_threshold: settings.matchThreshold, margin: settings.margin, search_mode: settings.mode },
    smallest_measurable: { fpir: smallestMeasurableRate(outcome.nonMated.length), fnir: smallestMeasurableRate(outcome.mated.length) },
    at_match_threshold: {
      threshold: settings.matchThreshold,
      fpir: fpirAt(outcome, settings.matchThreshold),
      fnir: fnirAt(outcome, settings.matchThreshold),
      decisions: outcome.decisions,
    },
    operating_points: targets.map((target) => operatingPoint(outcome, target)),
    spec_figures: {
      fpir_target: SPEC_FIGURES.fpir,
      fnir_target: SPEC_FIGURES.fnir,
      threshold_for_fpir: spec.threshold,
      fnir_there: spec.fnir,
      fnir_at_match_threshold: fnirAt(outcome, settings.matchThreshold),
      note: `FPIR ${SPEC_FIGURES.fpir} needs at least ${1 / SPEC_FIGURES.fpir} non-mated probes and FNIR ${SPEC_FIGURES.fnir} at least ${3 / SPEC_FIGURES.fnir} mated probes to be shown with 95 % confidence; this sample has ${outcome.nonMated.length} and ${outcome.mated.length}`,
    },
    det: thin(detCurve(outcome), DET_POINTS),
    eer: equalErrorRate(outcome),
    cmc: cmc(outcome),
    score_histograms: {
      bins: Array.from({ length: HISTOGRAM_BINS }, (_, index) => index / HISTOGRAM_BINS),
      mated_top1: histogram(outcome.mated.map((probe) => probe.top1Score)),
      non_mated_top1: histogram(outcome.nonMated),
    },
  }
}

export function reportMarkdown(report: AccuracyReport): string {
  const { decisions } = report.at_match_threshold
  const point = (entry: OperatingPoint) =>
    entry.threshold === null
      ? `| ${entry.target_fpir} | — | — | ${entry.note} |`
      : `| ${entry.target_fpir} | ${entry.threshold.toFixed(4)} | ${describeRate(entry.fpir!)} | ${describeRate(entry.fnir!)} |`
  return [
    '# palmvein accuracy report',
    '',
    `Open-set 1:N identification at gallery size **N = ${report.gallery_size.toLocaleString('en-US')}** subjects (${report.gallery_references.toLocaleString('en-US')} references), ` +
      `${report.mated_probes.toLocaleString('en-US')} mated and ${report.non_mated_probes.toLocaleString('en-US')} non-mated probes, d = ${report.dimension}, search mode ${report.settings.search_mode}. ` +
      'Metrics per ISO/IEC 19795-1: FNIR(T) = mated probes whose top-1 candidate is not their subject or scores below T; FPIR(T) = non-mated probes whose top-1 candidate scores at least T. Intervals are 95 % Wilson intervals.',
    '',
    `## At the environment's threshold ${report.settings.match_threshold} (margin ${report.settings.margin})`,
    '',
    `- FNIR: ${describeRate(report.at_match_threshold.fnir)}`,
    `- FPIR: ${describeRate(report.at_match_threshold.fpir)}`,
    `- Mated probes: ${decisions.mated.Found} Found (right member), ${decisions.mated.FoundWrong} Found as another member, ${decisions.mated.Ambiguous} Ambiguous, ${decisions.mated.NotFound} NotFound`,
    `- Non-mated probes: ${decisions.nonMated.Found} Found (false positives), ${decisions.nonMated.Ambiguous} Ambiguous, ${decisions.nonMated.NotFound} NotFound`,
    '',
    '## Thresholds for a target FPIR',
    '',
    '| target FPIR | threshold | FPIR | FNIR |',
    '|---:|---:|---|---|',
    ...report.operating_points.map(point),
    '',
    "## The spec's figures",
    '',
    `FAR below 0.00001 % (FPIR ${report.spec_figures.fpir_target}) and FRR below 0.01 % (FNIR ${report.spec_figures.fnir_target}). ${report.spec_figures.note}.`,
    report.spec_figures.threshold_for_fpir === null
      ? `FPIR ${report.spec_figures.fpir_target}: not measurable with this sample. FNIR at the environment's threshold: ${describeRate(report.spec_figures.fnir_at_match_threshold)}.`
      : `Threshold for FPIR ${report.spec_figures.fpir_target}: ${report.spec_figures.threshold_for_fpir.toFixed(4)}, FNIR there ${describeRate(report.spec_figures.fnir_there!)}.`,
    '',
    report.eer
      ? `Equal error rate (FNIR = FPIR): ${(report.eer.rate * 100).toPrecision(3)} % at threshold ${report.eer.threshold.toFixed(4)}.`
      : 'Equal error rate: needs mated and non-mated probes.',
    '',
    '## Rank-k identification (CMC)',
    '',
    `| rank | ${report.cmc.map((entry) => entry.rank).join(' | ')} |`,
    `|---|${report.cmc.map(() => '---:').join('|')}|`,
    `| rate | ${report.cmc.map((entry) => `${(entry.rate * 100).toFixed(2)} %`).join(' | ')} |`,
    '',
    '![DET](det.svg)',
    '![Top-1 scores](scores.svg)',
    '![CMC](cmc.svg)',
    '',
  ].join('\n')
}
