// @palmvein/client: the palmvein service from TypeScript.
export { createPalmveinClient, type ClientOptions, type components, type operations, type PalmveinClient, type paths } from './client.js'
export { isProblem, ok, PalmveinError, type CallResult, type Problem, type ProblemCode } from './problem.js'
export { collectPages, paginate, type PageQuery, type PaginateOptions } from './pagination.js'
export {
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookFailure,
  type WebhookHeaders,
} from './webhook-signature.js'
export { captureFromVector, syntheticCapture, type CaptureOptions, type Hand, type SyntheticCaptureOptions } from './capture.js'
export {
  MAX_POLL_WAIT_SECONDS,
  registerTerminal,
  TerminalClient,
  type CompleteEnrollmentBody,
  type DeviceMode,
  type EnrollmentSession,
  type IdentifyPalm,
  type IdentifyResult,
  type RegisterOptions,
  type TerminalRegistration,
  type TransactionInput,
} from './device-com.js'
export {
  palmForUser,
  runSimulatedTerminal,
  type SimulatedTerminal,
  type SimulatedTerminalEvent,
  type SimulatedTerminalOptions,
  type SyntheticPalm,
} from './simulated-terminal.js'
