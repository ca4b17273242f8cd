// /healthz runs every registered check under one hard deadline (800 ms, the spec's limit).
// A critical check failing → 503; a non-critical one → 200 with a warning line.

export interface HealthCheck {
  name: string
  critical: boolean
  /** Resolves to a short status ("ok", "loading 40%"); throws or times out when unhealthy. */
  check(): Promise<string>
}

export interface HealthReport {
  healthy: boolean
  lines: string[]
}

export const HEALTH_DEADLINE_MS = 800

export async function runHealthChecks(checks: HealthCheck[], deadlineMs = HEALTH_DEADLINE_MS): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async (check) => {
      let timer: NodeJS.Timeout | undefined
      try {
        const status = await Promise.race([
          check.check(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs)
          }),
        ])
        return { check, ok: true, status }
      } catch (error) {
        return { check, ok: false, status: (error as Error).message }
      } finally {
        clearTimeout(timer)
      }
    }),
  )
  const healthy = results.every((result) => result.ok || !result.check.critical)
  const lines = results.map(({ check, ok, status }) => (ok ? `${check.name}: ${status}` : `${check.critical ? 'FAIL' : 'WARNING'} ${check.name}: ${status}`))
  return { healthy, lines }
}
