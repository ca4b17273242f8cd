// `palmvein eval`: open-set accuracy with the real matcher, from a template file or the synthetic
// generator, written as report.json, report.md and SVG charts (src/accuracy/).
import { Command, Option } from 'commander'
import os from 'node:os'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import readline from 'node:readline'
import { EvalInputError, evaluate, type EvalSettings, type TemplateLine } from '../domain/accuracy/evaluate.js'
import { buildReport, reportMarkdown } from '../domain/accuracy/report.js'
import { cmcSvg, detSvg, scoresSvg } from '../domain/accuracy/svg.js'
import { syntheticTemplateSet, type SyntheticSetOptions } from '../domain/accuracy/synthetic-set.js'
import { numberIn, oneOf, positiveFractions, wholeNumber } from './arguments.js'
import { CommandRefused, UsageError } from './errors.js'

interface EvalArgs {
  out: string
  templates: string | null
  synthetic: SyntheticSetOptions | null
  settings: EvalSettings
  /** Target FPIRs of the operating points (default DEFAULT_TARGET_FPIRS). */
  targets?: number[]
}

async function* templateLines(file: string): AsyncGenerator<TemplateLine> {
  const lines = readline.createInterface({ input: file === '-' ? process.stdin : createReadStream(file), crlfDelay: Infinity })
  let number = 0
  for await (const text of lines) {
    number += 1
    if (!text.trim()) continue
    try {
      yield JSON.parse(text) as TemplateLine
    } catch {
      throw new EvalInputError(number, 'is not JSON')
    }
  }
}

async function runEval(args: EvalArgs): Promise<void> {
  const started = performance.now()
  if (args.templates && args.templates !== '-')
    await fs.access(args.templates).catch(() => {
      throw new CommandRefused(`cannot read ${args.templates}`)
    })
  const source = args.templates ? templateLines(args.templates) : syntheticTemplateSet(args.synthetic!)
  const synthetic =
    args.synthetic && `synthetic set (${args.synthetic.enrolled} enrolled, ${args.synthetic.unenrolled} never enrolled, seed ${args.synthetic.seed})`
  process.stderr.write(`palmvein eval: ${args.templates ? `templates from ${args.templates}` : synthetic}, search mode ${args.settings.mode} ...\n`)
  let outcome
  try {
    outcome = await evaluate(source, args.settings)
  } catch (error) {
    if (error instanceof EvalInputError) throw new CommandRefused(error.message)
    throw error
  }
  const report = buildReport(outcome, args.settings, args.targets)
  await fs.mkdir(args.out, { recursive: true })
  await Promise.all([
    fs.writeFile(path.join(args.out, 'report.json'), JSON.stringify(report, null, 2) + '\n'),
    fs.writeFile(path.join(args.out, 'report.md'), reportMarkdown(report)),
    fs.writeFile(path.join(args.out, 'det.svg'), detSvg(report)),
    fs.writeFile(path.join(args.out, 'scores.svg'), scoresSvg(report)),
    fs.writeFile(path.join(args.out, 'cmc.svg'), cmcSvg(report)),
  ])
  const { fnir, fpir } = report.at_match_threshold
  process.stdout.write(
    JSON.stringify({
      out: path.resolve(args.out),
      gallery_size: report.gallery_size,
      mated_probes: report.mated_probes,
      non_mated_probes: report.non_mated_probes,
      match_threshold: report.settings.match_threshold,
      fnir: fnir.rate,
      fpir: fpir.rate,
      seconds: Math.round(performance.now() - started) / 1000,
    }) + '\n',
  )
}

interface EvalOptions {
  out: string
  templates?: string
  synthetic?: boolean
  identities: number
  unenrolled: number
  seed: number
  dimension: number
  fpir?: number[]
  threshold: number
  margin: number
  mode: EvalSettings['mode']
}

function evalCommandLine(options: EvalOptions): Promise<void> {
  if (Boolean(options.templates) === Boolean(options.synthetic)) throw new UsageError('eval needs either --templates <file> or --synthetic')
  return runEval({
    out: options.out,
    templates: options.templates ?? null,
    synthetic: options.synthetic
      ? { enrolled: Math.max(1, options.identities), unenrolled: options.unenrolled, seed: options.seed, dimension: options.dimension }
      : null,
    settings: { matchThreshold: options.threshold, margin: options.margin, mode: options.mode, threads: Math.max(1, Math.min(4, os.availableParallelism())) },
    targets: options.fpir?.length ? options.fpir : undefined,
  })
}

export const evalCommand = () =>
  new Command('eval')
    .description('open-set 1:N accuracy with the real matcher: FNIR at FPIR, DET, CMC, score distributions (report.json, report.md, SVG charts in <dir>)')
    .requiredOption('--out <dir>', 'where the report is written')
    .option('--templates <file>', 'templates, one JSON object a line (- for standard input)')
    .option('--synthetic', 'a seeded synthetic set instead of --templates')
    .option('--identities <n>', 'synthetic: enrolled identities', wholeNumber(0, 1_000_000), 2000)
    .option('--unenrolled <n>', 'synthetic: identities never enrolled', wholeNumber(0, 1_000_000), 2000)
    .option('--seed <s>', 'synthetic: the seed', wholeNumber(0, 2 ** 31), 42)
    .option('--dimension <d>', 'synthetic: template dimension, 128, 256 or 512', oneOf([128, 256, 512]), 256)
    .option('--fpir <list>', 'target FPIRs of the operating points, e.g. 1e-2,1e-3', positiveFractions)
    .option('--threshold <t>', 'the match threshold', numberIn(0, 1), 0.8)
    .option('--margin <m>', 'the margin', numberIn(0, 1), 0.03)
    .addOption(new Option('--mode <m>', 'search mode').choices(['exact', 'two_stage', 'auto']).default('exact'))
    .action(evalCommandLine)
