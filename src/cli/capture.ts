// `palmvein capture --synthetic`: a PVT1 palm capture of a seeded synthetic person, to try the API without a sensor.
import { Command, Option } from 'commander'
import { syntheticCapture } from '@palmvein/client'
import { oneOf, wholeNumber } from './arguments.js'
import { UsageError } from './errors.js'

interface CaptureOptions {
  synthetic?: boolean
  identity: number
  hand: 'left' | 'right'
  session: number
  attempt: number
  dimension: number
  seed: number
  extractorId: number
}

function capture(options: CaptureOptions): void {
  if (!options.synthetic) throw new UsageError('capture needs --synthetic: the seeded generator is the only source without a sensor')
  console.log(
    syntheticCapture({
      identity: options.identity,
      hand: options.hand,
      session: options.session,
      attempt: options.attempt,
      dimension: options.dimension,
      seed: options.seed,
      extractorId: options.extractorId,
    }),
  )
}

export const captureCommand = () =>
  new Command('capture')
    .description('print a PVT1 palm capture (base64url) of a seeded synthetic person: same identity and hand, same palm')
    .option('--synthetic', 'from the seeded generator (required: the only source without a sensor)')
    .requiredOption('--identity <n>', 'the synthetic person', wholeNumber(0, 10_000_000))
    .addOption(new Option('--hand <hand>', 'which palm').choices(['left', 'right']).makeOptionMandatory())
    .option('--session <k>', 'the capture session (another session: another capture of the same palm)', wholeNumber(0, 1_000_000), 0)
    .option('--attempt <a>', 'the attempt within the session', wholeNumber(0, 1_000_000), 0)
    .option('--dimension <d>', 'template dimension: 128, 256 or 512', oneOf([128, 256, 512]), 256)
    .option('--seed <s>', "the generator's seed", wholeNumber(0, 2 ** 31), 7)
    .option('--extractor-id <id>', 'the extractor id written into the capture', wholeNumber(0, 65_535), 1)
    .action(capture)
