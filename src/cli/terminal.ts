// `palmvein terminal`: a simulated palm terminal on @palmvein/client, to try Device-Com and kiosks
// without hardware. It registers, prints its registration code, long-polls for sessions and
// completes each with a synthetic palm of the session's person; one JSON line per event on stdout.
import { runSimulatedTerminal, type SimulatedTerminalEvent } from '@palmvein/client'
import { Command, Option } from 'commander'
import { wholeNumber } from './arguments.js'
import { UsageError } from './errors.js'

interface TerminalOptions {
  url: string
  mode: 'enrollment' | 'payment' | 'access'
  project?: string
  credential?: string
  name?: string
  seed: number
  dimension: number
}

// What each event prints: ids and outcomes, never a capture or a token.
function describe(event: SimulatedTerminalEvent): Record<string, unknown> {
  switch (event.type) {
    case 'registered':
      return { event: 'registered', device_id: event.deviceId, registration_code: event.registrationCode }
    case 'linked':
      return { event: 'linked', device_id: event.deviceId }
    case 'session':
      return { event: 'session', enroll_id: event.session.enroll_id, user_id: event.session.user_id }
    case 'enrolled':
      return { event: 'enrolled', enroll_id: event.session.enroll_id, member_id: event.memberId, identity: event.palm.identity, hand: event.palm.hand }
    case 'refused':
      return { event: 'refused', enroll_id: event.session.enroll_id, code: event.error.code, detail: event.error.detail }
  }
}

async function terminal(options: TerminalOptions): Promise<void> {
  if (Boolean(options.project) !== Boolean(options.credential)) {
    throw new UsageError('--project and --credential go together (link the terminal to that project at once)')
  }
  const stop = new AbortController()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort())
  const simulated = await runSimulatedTerminal({
    baseUrl: options.url.replace(/\/$/, ''),
    mode: options.mode,
    seed: options.seed,
    dimension: options.dimension,
    link: options.project ? { projectId: options.project, credential: options.credential!, deviceName: options.name } : undefined,
    onEvent: (event) => console.log(JSON.stringify(describe(event))),
    signal: stop.signal,
  })
  await simulated.finished
}

export const terminalCommand = () =>
  new Command('terminal')
    .description(
      'run a simulated palm terminal against a service: registers over Device-Com, prints its registration code, ' +
        "and completes every enrollment session it is given with a synthetic palm of the session's person (one JSON line per event; Ctrl-C stops it)",
    )
    .option('--url <url>', "the service's base URL", process.env.PALMVEIN_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`)
    .addOption(new Option('--mode <mode>', "the terminal's mode").choices(['enrollment', 'payment', 'access']).default('enrollment'))
    .option('--project <project_id>', 'link the terminal to this project at once (else link it with the printed registration code)')
    .addOption(new Option('--credential <key>', 'an API key or identity token of that project (for --project)').env('PALMVEIN_CREDENTIAL'))
    .option('--name <name>', 'the device name when it links itself')
    .option('--seed <n>', "the synthetic population's seed (the one `palmvein capture` uses)", wholeNumber(0, 2 ** 31), 7)
    .option('--dimension <d>', "the environment's template dimension", wholeNumber(16, 4096), 256)
    .action(terminal)
