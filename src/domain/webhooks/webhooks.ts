// Webhook subscriptions and their delivery history, scoped by project: a subscription of another
// project answers not_found exactly like a missing one. URLs pass the SSRF guard (resolving the
// host) before any transaction opens; the test operation writes a webhook.test event to the
// outbox and wakes the dispatcher after commit.
import type { Database } from '../../store/engine/database.js'
import * as store from '../../store/webhook-subscriptions.js'
import { ServiceError, notFound } from '../../errors.js'
import { isUuid, newId, timestamp } from '../../ids.js'
import { generateSecret } from '../../webhooks/signer.js'
import { SUBSCRIBABLE_EVENT_TYPES, enqueueTestEvent, wakeDispatcher } from '../../webhooks/outbox.js'
import type { SsrfGuard } from '../../webhooks/ssrf-guard.js'
import type { WebhookSecrets } from '../../keys/webhook-secrets.js'

export const MAX_SUBSCRIPTIONS_PER_PROJECT = 25
export const DELIVERIES_PER_PAGE = { min: 10, max: 1000 } as const

export interface WebhookDeps {
  db: Pick<Database, 'sql' | 'notify'>
  guard: SsrfGuard
  secrets: WebhookSecrets
}

export interface Subscription {
  id: string
  url: string
  event_types: string[]
  enabled: boolean
  /** Present when the service disabled it: the receiver answered 410 Gone, or deliveries failed for 5 days. */
  disabled_reason?: 'gone' | 'failing'
  created_at: string
  updated_at: string
}

export interface CreatedSubscription {
  id: string
  url: string
  secret: string
  event_types: string[]
  enabled: boolean
  created_at: string
}

export interface DeliveryItem {
  id: string
  subscription_id: string
  payload: { event_id: string; timestamp: string; project_id: string; data: Record<string, unknown> }
  attempt_count: number
  attempt_pending: boolean
  response_status: number | null
  response_body: string | null
  status: 'pending' | 'success' | 'failed'
  created_at: string
  last_attempt_at: string | null
}

export interface AttemptItem {
  id: string
  delivery_id: string
  attempt_number: number
  attempted_at: string
  response_status: number | null
  response_body: string | null
  error_message: string | null
  duration_ms: number
}

const view = (row: store.SubscriptionRow): Subscription => ({
  id: row.id,
  url: row.url,
  event_types: row.event_types,
  enabled: row.enabled,
  ...(row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
  created_at: timestamp(row.created_at)!,
  updated_at: timestamp(row.updated_at)!,
})

/** The allowlist (enrollment.completed, demo.scan.success), duplicates dropped, order kept. */
export function checkEventTypes(eventTypes: unknown): string[] {
  if (!Array.isArray(eventTypes) || eventTypes.length === 0 || !eventTypes.every((type) => typeof type === 'string')) {
    throw new ServiceError('invalid_request', 'event_types must be a non-empty array of strings', {
      errors: [{ path: '/event_types', message: 'must be a non-empty array of strings' }],
    })
  }
  const refused = eventTypes.filter((type) => !(SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(type))
  if (refused.length > 0) {
    throw new ServiceError(
      'event_type_not_allowed',
      `event type ${refused.map((type) => `"${type}"`).join(', ')} cannot be subscribed to; allowed: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`,
    )
  }
  return [...new Set(eventTypes as string[])]
}

async function checkUrl(guard: SsrfGuard, url: unknown): Promise<string> {
  if (typeof url !== 'string') {
    throw new ServiceError('invalid_request', 'url must be a string', { errors: [{ path: '/url', message: 'must be a string' }] })
  }
  await guard.check(url)
  // Stored as sent: every attempt parses and checks it again.
  return url
}

function subscriptionNotFound(): ServiceError {
  return notFound('Webhook subscription')
}

export async function createSubscription(
  deps: WebhookDeps,
  projectId: string,
  input: { url: string; event_types: string[]; enabled?: boolean },
): Promise<CreatedSubscription> {
  if (!isUuid(projectId)) throw notFound('Project')
  const eventTypes = checkEventTypes(input.event_types)
  const url = await checkUrl(deps.guard, input.url)
  const id = newId()
  const secret = generateSecret()
  const now = new Date()
  const enabled = input.enabled ?? true
  // A project without an environment seals the secret under the master key (both during a rotation).
  await deps.secrets.prepare(deps.db.sql)
  const outcome = await store.insertSubscriptionWithinLimit(
    deps.db.sql,
    {
      id,
      project_id: projectId,
      url,
      sealSecret: (owner) => deps.secrets.seal(owner, secret),
      event_types: eventTypes,
      enabled,
      created_at: now,
    },
    MAX_SUBSCRIPTIONS_PER_PROJECT,
  )
  if (outcome === 'no_project') throw notFound('Project')
  if (outcome === 'limit_reached') {
    throw new ServiceError('webhook_limit_reached', `a project may have at most ${MAX_SUBSCRIPTIONS_PER_PROJECT} webhook subscriptions`)
  }
  return { id, url, secret, event_types: eventTypes, enabled, created_at: timestamp(now)! }
}

export async function listSubscriptions(deps: WebhookDeps, projectId: string): Promise<Subscription[]> {
  if (!isUuid(projectId)) return []
  return (await store.subscriptionsOfProject(deps.db.sql, projectId)).map(view)
}

export async function getSubscription(deps: WebhookDeps, projectId: string, subscriptionId: string): Promise<Subscription> {
  if (!isUuid(projectId) || !isUuid(subscriptionId)) throw subscriptionNotFound()
  const row = await store.subscriptionById(deps.db.sql, projectId, subscriptionId)
  if (!row) throw subscriptionNotFound()
  return view(row)
}

export async function updateSubscription(
  deps: WebhookDeps,
  projectId: string,
  subscriptionId: string,
  changes: { url?: string; event_types?: string[]; enabled?: boolean },
): Promise<Subscription> {
  const current = await getSubscription(deps, projectId, subscriptionId)
  const eventTypes = changes.event_types === undefined ? current.event_types : checkEventTypes(changes.event_types)
  const url = changes.url === undefined ? current.url : await checkUrl(deps.guard, changes.url)
  const enabled = changes.enabled ?? current.enabled
  if (changes.url === undefined && changes.event_types === undefined && changes.enabled === undefined) return current
  const row = await store.updateSubscription(deps.db.sql, projectId, subscriptionId, { url, event_types: eventTypes, enabled, updated_at: new Date() })
  if (!row) throw subscriptionNotFound()
  // Re-enabling lets paused deliveries go out now rather than at the next poll.
  if (changes.enabled === true) await wakeDispatcher(deps.db)
  return view(row)
}

/** Permanent: the subscription and its delivery history are removed. */
export async function deleteSubscription(deps: WebhookDeps, projectId: string, subscriptionId: string): Promise<void> {
  if (!isUuid(projectId) || !isUuid(subscriptionId)) throw subscriptionNotFound()
  if (!(await store.deleteSubscription(deps.db.sql, projectId, subscriptionId))) throw subscriptionNotFound()
}

export const TEST_MESSAGE = 'This is a test event from palmvein webhooks.'

/** Sends a webhook.test event to this subscription only, signed and retried like any event. */
export async function sendTestEvent(deps: WebhookDeps, projectId: string, subscriptionId: string): Promise<{ test_id: string; message: string }> {
  if (!isUuid(projectId) || !isUuid(subscriptionId)) throw subscriptionNotFound()
  const testId = newId()
  const eventId = await enqueueTestEvent(deps.db.sql, {
    projectId,
    subscriptionId,
    data: { test_id: testId, message: TEST_MESSAGE, triggered_at: timestamp(new Date()) },
  })
  if (!eventId) throw subscriptionNotFound()
  await wakeDispatcher(deps.db)
  return { test_id: testId, message: TEST_MESSAGE }
}

/** A delivery on the wire (spec "Webhooks" history shape). */
export function deliveryItem(row: store.DeliveryRow): DeliveryItem {
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    payload: {
      event_id: row.payload.event_id,
      timestamp: row.payload.timestamp,
      project_id: row.payload.project_id,
      // The spec's history shows event_type inside data.
      data: { event_type: row.payload.event_type, ...row.payload.data },
    },
    attempt_count: row.attempt_count,
    attempt_pending: row.status === 'pending' && row.next_attempt_at !== null,
    response_status: row.response_status,
    response_body: row.response_body,
    status: row.status,
    created_at: timestamp(row.created_at)!,
    last_attempt_at: timestamp(row.last_attempt_at),
  }
}

export function parseTime(value: Date | string, name: string): Date {
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) {
    throw new ServiceError('invalid_request', `${name} must be an RFC 3339 date-time`, { errors: [{ path: `/${name}`, message: 'must be a date-time' }] })
  }
  return date
}

/** Deliveries created in [from, to], newest first, one page of them plus the window's total. */
export async function listDeliveries(
  deps: WebhookDeps,
  projectId: string,
  subscriptionId: string,
  query: { from: Date | string; to: Date | string; page: number; per_page: number; status?: 'pending' | 'success' | 'failed'; event_type?: string },
): Promise<{ items: DeliveryItem[]; total_count: number }> {
  const from = parseTime(query.from, 'from')
  const to = parseTime(query.to, 'to')
  if (!Number.isInteger(query.page) || query.page < 1) {
    throw new ServiceError('invalid_request', 'page must be an integer >= 1', { errors: [{ path: '/page', message: 'must be >= 1' }] })
  }
  if (!Number.isInteger(query.per_page) || query.per_page < DELIVERIES_PER_PAGE.min || query.per_page > DELIVERIES_PER_PAGE.max) {
    throw new ServiceError('invalid_request', `per_page must be an integer from ${DELIVERIES_PER_PAGE.min} to ${DELIVERIES_PER_PAGE.max}`, {
      errors: [{ path: '/per_page', message: `must be between ${DELIVERIES_PER_PAGE.min} and ${DELIVERIES_PER_PAGE.max}` }],
    })
  }
  await getSubscription(deps, projectId, subscriptionId)
  const window = { projectId, subscriptionId, from, to, status: query.status, eventType: query.event_type }
  const rows = await store.deliveriesPage(deps.db.sql, window, { limit: query.per_page, offset: (query.page - 1) * query.per_page })
  // An empty page past the end still reports the window's total.
  const total = rows[0]?.total_count ?? (await store.deliveryCount(deps.db.sql, window))
  return {
    items: rows.map(deliveryItem),
    total_count: total,
  }
}

export async function listAttempts(deps: WebhookDeps, projectId: string, subscriptionId: string, deliveryId: string): Promise<AttemptItem[]> {
  if (!isUuid(projectId) || !isUuid(subscriptionId) || !isUuid(deliveryId)) throw notFound('Webhook delivery')
  if (!(await store.deliveryExists(deps.db.sql, projectId, subscriptionId, deliveryId))) throw notFound('Webhook delivery')
  const rows = await store.attemptsOfDelivery(deps.db.sql, deliveryId)
  return rows.map((row) => ({ ...row, attempted_at: timestamp(row.attempted_at)! }))
}
