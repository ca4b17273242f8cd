// Device-Com, the terminal's side of the service: register without a credential (a device token
// and a registration code a project links with), long-poll for enrollment sessions, complete them
// with captures, identify palms (server lookup) and record transactions.
import { createPalmveinClient, type components, type operations, type PalmveinClient } from './client.js'
import { ok } from './problem.js'

export type EnrollmentSession = components['schemas']['EnrollmentSession']
export type IdentifyResult = components['schemas']['IdentifyResult']
export type DeviceMode = operations['registerTerminal']['requestBody']['content']['application/json']['mode']
export type CompleteEnrollmentBody = NonNullable<operations['completeTerminalEnrollment']['requestBody']>['content']['application/json']
export type IdentifyPalm = operations['identifyOnTerminal']['requestBody']['content']['application/json']['palm']
export type TransactionInput = operations['recordTerminalTransaction']['requestBody']['content']['application/json']

/** The longest long poll the service holds (GET /v1/device-com/enrollment?wait=). */
export const MAX_POLL_WAIT_SECONDS = 30

export interface TerminalRegistration {
  deviceId: string
  /** 8 characters, single use, valid 15 minutes: a project links the terminal with it. */
  registrationCode: string
  /** `pvd_…`, shown once: the terminal's credential on every Device-Com call. */
  deviceToken: string
}

export interface RegisterOptions {
  baseUrl: string
  mode: DeviceMode
  /** Free text, e.g. android, linux, usb-sensor. */
  hardwarePlatform: string
  fetch?: typeof globalThis.fetch
}

/** POST /v1/device-com/registration. */
export async function registerTerminal(options: RegisterOptions): Promise<TerminalRegistration> {
  const pv = createPalmveinClient({ baseUrl: options.baseUrl, fetch: options.fetch })
  const registered = await ok(pv.POST('/v1/device-com/registration', { body: { hardware_platform: options.hardwarePlatform, mode: options.mode } }))
  return { deviceId: registered.device_id, registrationCode: registered.registration_code, deviceToken: registered.device_token }
}

/** A registered terminal's calls, authenticated with its device token. */
export class TerminalClient {
  /** The typed client with the device token, for calls this class does not wrap. */
  readonly api: PalmveinClient

  constructor(options: { baseUrl: string; deviceToken: string; fetch?: typeof globalThis.fetch }) {
    this.api = createPalmveinClient({ baseUrl: options.baseUrl, credential: options.deviceToken, fetch: options.fetch })
  }

  /**
   * The terminal's active enrollment session (picking it up), waiting up to `waitSeconds` (0 to 30)
   * for one to start; null when none did. Before a project linked the terminal: PalmveinError 403 forbidden.
   */
  async pollEnrollment(options: { waitSeconds?: number; signal?: AbortSignal } = {}): Promise<EnrollmentSession | null> {
    const answer = await ok(
      this.api.GET('/v1/device-com/enrollment', {
        params: { query: { wait: options.waitSeconds ?? MAX_POLL_WAIT_SECONDS } },
        signal: options.signal,
      }),
    )
    return answer?.session ?? null
  }

  /** Completes the session with the member's captures, echoing its challenge. */
  async completeEnrollment(session: EnrollmentSession, hands: Omit<CompleteEnrollmentBody, 'challenge'>) {
    return ok(
      this.api.POST('/v1/device-com/enrollment/{session_id}/complete', {
        params: { path: { session_id: session.enroll_id } },
        body: { ...hands, challenge: session.challenge },
      }),
    )
  }

  /** Server lookup: 1:N against the project's environment (403 server_lookup_disabled unless enabled). */
  async identify(palm: IdentifyPalm, options: { k?: number } = {}): Promise<IdentifyResult> {
    return ok(this.api.POST('/v1/device-com/identify', { params: { query: options.k === undefined ? {} : { k: options.k } }, body: { palm } }))
  }

  async recordTransaction(transaction: TransactionInput) {
    return ok(this.api.POST('/v1/device-com/transactions', { body: transaction }))
  }
}
