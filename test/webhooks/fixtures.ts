// Rows the webhook tests need (an organization and its projects), a manual clock and a fake
// resolver: no test traffic ever leaves loopback.
import { randomBytes } from 'node:crypto'
import { createKeyring } from '../../src/keys/keyring.js'
import { newId } from '../../src/ids.js'
import type { Sql } from '../../src/store/engine/database.js'
import type { Clock } from '../../src/webhooks/clock.js'
import type { Resolver } from '../../src/webhooks/ssrf-guard.js'
import { loadConfig, type Config } from '../../src/config.js'

export async function createProject(sql: Sql): Promise<string> {
  const orgId = newId()
  const projectId = newId()
  await sql`INSERT INTO organizations (id, name, kind) VALUES (${orgId}, 'Webhook Org', 'customer')`
  await sql`
    INSERT INTO projects (id, org_id, name, plan, headcount, daily_request_limit, requests_per_minute)
    VALUES (${projectId}, ${orgId}, 'Webhook Project', 'business', 10000, 100000, 100)`
  return projectId
}

export interface ManualClock extends Clock {
  set(date: Date): void
  advance(milliseconds: number): void
}

export function manualClock(start = new Date()): ManualClock {
  let current = start.getTime()
  return {
    now: () => new Date(current),
    set: (date) => {
      current = date.getTime()
    },
    advance: (milliseconds) => {
      current += milliseconds
    },
  }
}

/** A resolver answering from a table that tests may change (DNS rebinding); unknown names fail. */
export function fakeResolver(table: Record<string, string[]>): Resolver & { table: Record<string, string[]>; calls: string[] } {
  const calls: string[] = []
  const resolve = (async (hostname: string) => {
    calls.push(hostname)
    const addresses = resolve.table[hostname]
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses
  }) as Resolver & { table: Record<string, string[]>; calls: string[] }
  resolve.table = table
  resolve.calls = calls
  return resolve
}

/** Configuration for an engine under test (the environment is not read). */
export function webhookConfig(overrides: Partial<Config> = {}): Config {
  return loadConfig({ webhookAllowLocalhost: true, webhookTimeoutMs: 2000, webhookCaFile: null, nodeEnv: 'test', ...overrides }, {})
}

/** The keyring engines under test seal and open webhook secrets with (one master key per test run). */
export const testKeyring = createKeyring(randomBytes(32))
