// The engine's notion of "now", injectable so tests can drive a 14-day retry schedule in
// milliseconds. Durations of attempts are measured with the monotonic timer, not this clock.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }
