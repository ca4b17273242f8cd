// A terminal without hardware: registers through Device-Com, waits for a project to link it with
// its registration code, then long-polls and completes every enrollment session with a seeded
// synthetic palm, and identifies synthetic palms on request. `palmvein terminal` runs it, to try
// kiosks and enrollment flows end to end.
import { syntheticCapture, type Hand } from './capture.js'
import { createPalmveinClient } from './client.js'
import { registerTerminal, TerminalClient, type DeviceMode, type EnrollmentSession, type IdentifyResult, MAX_POLL_WAIT_SECONDS } from './device-com.js'
import { ok, PalmveinError } from './problem.js'

/** Which synthetic palm stands in for a person. */
export interface SyntheticPalm {
  identity: number
  hand: Hand
}

export type SimulatedTerminalEvent =
  | { type: 'registered'; deviceId: string; registrationCode: string }
  | { type: 'linked'; deviceId: string }
  | { type: 'session'; session: EnrollmentSession }
  | { type: 'enrolled'; session: EnrollmentSession; memberId: string; palm: SyntheticPalm }
  | { type: 'refused'; session: EnrollmentSession; error: PalmveinError }

export interface SimulatedTerminalOptions {
  baseUrl: string
  /** Default `enrollment`. */
  mode?: DeviceMode
  /** Default `simulated`. */
  hardwarePlatform?: string
  /**
   * Link the terminal to a project right away, as its admin would with the registration code
   * (`credential`: an identity token or API key of the project). Otherwise someone links it with
   * the code from the `registered` event, and the terminal waits for that.
   */
  link?: { credential: string; projectId: string; deviceName?: string }
  /** The palm of a session's person (`user_id`); default: an identity derived from the id, left hand. */
  palmOf?: (userId: string) => SyntheticPalm
  /** The environment's dimension (default 256) and the synthetic population's seed (default 7). */
  dimension?: number
  seed?: number
  /** Long-poll wait, 1 to 30 s (default 30). */
  pollWaitSeconds?: number
  /** Pause before asking again after a refusal or while unlinked (default 1000 ms). */
  retryDelayMs?: number
  onEvent?: (event: SimulatedTerminalEvent) => void
  signal?: AbortSignal
  fetch?: typeof globalThis.fetch
}

export interface SimulatedTerminal {
  deviceId: string
  registrationCode: string
  deviceToken: string
  /** The terminal's Device-Com calls. */
  client: TerminalClient
  /** Server lookup of a synthetic palm (a later visit than enrollment's: session 1 by default). */
  identify(palm: SyntheticPalm & { session?: number }): Promise<IdentifyResult>
  /** Ends the loop (the long poll is aborted) and waits for it. */
  stop(): Promise<void>
  /** Settles when the loop ends: resolves on stop or abort, rejects on an error it cannot go on from. */
  finished: Promise<void>
}

/** An identity in 0..999999 from a user id (FNV-1a): the same person always gets the same palm. */
export function palmForUser(userId: string): SyntheticPalm {
  let hash = 0x811c9dc5
  for (let index = 0; index < userId.length; index++) hash = Math.imul(hash ^ userId.charCodeAt(index), 0x01000193) >>> 0
  return { identity: hash % 1_000_000, hand: 'left' }
}

// Refusals worth asking again about: the person has not confirmed yet, or the service is busy.
const RETRIED = new Set(['confirmation_required', 'rate_limited', 'unavailable', 'database_unavailable', 'shard_unavailable'])

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** Links the registered terminal to a project with its registration code, as the project's admin would. */
async function linkTerminal(options: SimulatedTerminalOptions, link: NonNullable<SimulatedTerminalOptions['link']>, registrationCode: string): Promise<void> {
  const admin = createPalmveinClient({ baseUrl: options.baseUrl, credential: link.credential, fetch: options.fetch })
  await ok(
    admin.POST('/v1/projects/{project_id}/device/android/complete_registration', {
      params: { path: { project_id: link.projectId } },
      body: { registration_code: registrationCode, device_name: link.deviceName ?? 'Simulated terminal', device_mode: options.mode ?? 'enrollment' },
    }),
  )
}

/** Registers a simulated terminal and starts its loop; answers once it is registered (and linked, with `link`). */
export async function runSimulatedTerminal(options: SimulatedTerminalOptions): Promise<SimulatedTerminal> {
  const emit = options.onEvent ?? (() => {})
  const palmOf = options.palmOf ?? palmForUser
  const retryDelayMs = options.retryDelayMs ?? 1000
  const waitSeconds = Math.min(Math.max(options.pollWaitSeconds ?? MAX_POLL_WAIT_SECONDS, 1), MAX_POLL_WAIT_SECONDS)
  const capture = (palm: SyntheticPalm, session: number, attempt: number) =>
    syntheticCapture({ ...palm, session, attempt, dimension: options.dimension, seed: options.seed })

  const registration = await registerTerminal({
    baseUrl: options.baseUrl,
    mode: options.mode ?? 'enrollment',
    hardwarePlatform: options.hardwarePlatform ?? 'simulated',
    fetch: options.fetch,
  })
  emit({ type: 'registered', deviceId: registration.deviceId, registrationCode: registration.registrationCode })
  if (options.link) await linkTerminal(options, options.link, registration.registrationCode)
  const client = new TerminalClient({ baseUrl: options.baseUrl, deviceToken: registration.deviceToken, fetch: options.fetch })
  const stopping = new AbortController()
  const stopOnSignal = () => stopping.abort()
  options.signal?.addEventListener('abort', stopOnSignal, { once: true })
  if (options.signal?.aborted) stopping.abort()

  async function loop(): Promise<void> {
    let linked = false
    // Sessions refused for good (a duplicate palm, say): the poll hands them back until they expire.
    const refused = new Set<string>()
    while (!stopping.signal.aborted) {
      let session: EnrollmentSession | null
      try {
        // Unlinked, the service refuses at once: ask without waiting, to notice the link soon.
        session = await client.pollEnrollment({ waitSeconds: linked ? waitSeconds : 0, signal: stopping.signal })
      } catch (error) {
        if (stopping.signal.aborted) return
        // 403 forbidden until a project links the terminal with its code.
        if (error instanceof PalmveinError && ((error.code === 'forbidden' && !linked) || RETRIED.has(error.code))) {
          await sleep(error.retryAfter ? error.retryAfter * 1000 : retryDelayMs, stopping.signal)
          continue
        }
        throw error
      }
      if (!linked) {
        linked = true
        emit({ type: 'linked', deviceId: registration.deviceId })
      }
      if (!session) continue
      if (refused.has(session.enroll_id)) {
        await sleep(retryDelayMs, stopping.signal)
        continue
      }
      emit({ type: 'session', session })
      const palm = palmOf(session.user_id)
      const hand = { enroll_capture: capture(palm, 0, 0), identify_capture: capture(palm, 0, 1) }
      try {
        const completed = await client.completeEnrollment(session, palm.hand === 'left' ? { left_hand: hand } : { right_hand: hand })
        emit({ type: 'enrolled', session: completed.session, memberId: completed.member_id, palm })
      } catch (error) {
        if (!(error instanceof PalmveinError) || (error.status >= 500 && !RETRIED.has(error.code))) throw error
        emit({ type: 'refused', session, error })
        if (!RETRIED.has(error.code)) refused.add(session.enroll_id)
        await sleep(retryDelayMs, stopping.signal)
      }
    }
  }

  const finished = loop().finally(() => options.signal?.removeEventListener('abort', stopOnSignal))
  // The caller may only look at `finished` later: keep an early failure from being an unhandled rejection.
  finished.catch(() => {})
  return {
    ...registration,
    client,
    identify: (palm) => client.identify({ identify_capture: capture(palm, palm.session ?? 1, 0) }),
    async stop() {
      stopping.abort()
      await finished
    },
    finished,
  }
}
