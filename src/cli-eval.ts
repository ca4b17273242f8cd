// `palmvein eval`: open-set accuracy with the real matcher, from a template file or the synthetic
// generator, written as report.json, report.md and SVG charts (src/accuracy/).
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import readline from 'node:readline'
import { CommandRefused } from './cli-session.js'
import { EvalInputError, evaluate, type EvalSettings, type TemplateLine } from './domain/accuracy/evaluate.js'
import { buildReport, reportMarkdown } from './domain/accuracy/report.js'
import { cmcSvg, detSvg, scoresSvg } from './domain/accuracy/svg.js'
import { syntheticTemplateSet, type SyntheticSetOptions } from './domain/accuracy/synthetic-set.js'

export interface EvalArgs {
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

export async function runEval(args: EvalArgs): Promise<void> {
  const started = performance.now()
  if (args.templates && args.templates !== '-') await fs.access(args.templates).catch(() => { throw new CommandRefused(`cannot read ${args.templates}`) })
  const source = args.templates ? templateLines(args.templates) : syntheticTemplateSet(args.synthetic!)
  process.stderr.write(`palmvein eval: ${args.templates ? `templates from ${args.templates}` : `synthetic set (${args.synthetic!.enrolled} enrolled, ${args.synthetic!.unenrolled} never enrolled, seed ${args.synthetic!.seed})`}, search mode ${args.settings.mode} ...\n`)
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
  process.stdout.write(JSON.stringify({
    out: path.resolve(args.out), gallery_size: report.gallery_size, mated_probes: report.mated_probes, non_mated_probes: report.non_mated_probes,
    match_threshold: report.settings.match_threshold, fnir: fnir.rate, fpir: fpir.rate, seconds: Math.round(performance.now() - started) / 1000,
  }) + '\n')
}
