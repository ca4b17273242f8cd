// Queries of webhook subscriptions and their delivery history, always scoped by project: a row of
// another project is never read, changed or counted.
import type { Envelope } from './webhook-outbox.js'
import type { Sql } from './engine/database.js'

export interface SubscriptionRow {
  id: string
  url: string
  event_types: string[]
  enabled: boolean
  /** Why the service disabled it (receiver gone, or failing for days); null otherwise. */
  disabled_reason: 'gone' | 'failing' | null
  created_at: Date
  updated_at: Date
}

/** The key owner of a subscription's secret: its project's environment (null without one). */
export interface SecretKeyOwner {
  subscription_id: string
  environment_id: string | null
  environment_wrapped_key: Buffer | null
}

export interface NewSubscription {
  id: string
  project_id: string
  url: string
  /** Seals the secret once the project's environment is known (inside the insert's transaction). */
  sealSecret(owner: SecretKeyOwner): Buffer
  event_types: string[]
  enabled: boolean
  created_at: Date
}

/**
 * Inserts the subscription unless the project already has `max`; the project row is locked, so
 * concurrent creates cannot pass the limit together.
 */
export async function insertSubscriptionWithinLimit(sql: Sql, row: NewSubscription, max: number): Promise<'inserted' | 'no_project' | 'limit_reached'> {
  return sql.begin(async (tx) => {
    const [project] = await tx<{ environment_id: string | null; environment_wrapped_key: Buffer | null }[]>`
      SELECT project.environment_id, environment.wrapped_key AS environment_wrapped_key
      FROM projects AS project LEFT JOIN environments AS environment ON environment.id = project.environment_id
      WHERE project.id = ${row.project_id} FOR UPDATE OF project`
    if (!project) return 'no_project'
    const [{ count }] = await tx<{ count: number }[]>`SELECT count(*)::int AS count FROM webhook_subscriptions WHERE project_id = ${row.project_id}`
    if (count >= max) return 'limit_reached'
    const sealed = row.sealSecret({ subscription_id: row.id, ...project })
    await tx`
      INSERT INTO webhook_subscriptions (id, project_id, url, secret_sealed, event_types, enabled, created_at, updated_at)
      VALUES (${row.id}, ${row.project_id}, ${row.url}, ${sealed}, ${row.event_types}::text[], ${row.enabled}, ${row.created_at}, ${row.created_at})`
    return 'inserted'
  })
}

export function subscriptionsOfProject(sql: Sql, projectId: string) {
  return sql<SubscriptionRow[]>`
    SELECT id, url, event_types, enabled, disabled_reason, created_at, updated_at FROM webhook_subscriptions
    WHERE project_id = ${projectId} ORDER BY created_at, id`
}

export async function subscriptionById(sql: Sql, projectId: string, subscriptionId: string): Promise<SubscriptionRow | null> {
  const [row] = await sql<SubscriptionRow[]>`
    SELECT id, url, event_types, enabled, disabled_reason, created_at, updated_at FROM webhook_subscriptions
    WHERE id = ${subscriptionId} AND project_id = ${projectId}`
  return row ?? null
}

export async function updateSubscription(
  sql: Sql,
  projectId: string,
  subscriptionId: string,
  values: { url: string; event_types: string[]; enabled: boolean; updated_at: Date },
): Promise<SubscriptionRow | null> {
  const [row] = await sql<SubscriptionRow[]>`
    UPDATE webhook_subscriptions
    SET url = ${values.url}, event_types = ${values.event_types}::text[], enabled = ${values.enabled}, updated_at = ${values.updated_at},
        -- Enabled again: a fresh start, whatever disabled it.
        disabled_reason = CASE WHEN ${values.enabled} THEN NULL ELSE disabled_reason END,
        failing_since = CASE WHEN ${values.enabled} AND NOT enabled THEN NULL ELSE failing_since END
    WHERE id = ${subscriptionId} AND project_id = ${projectId}
    RETURNING id, url, event_types, enabled, disabled_reason, created_at, updated_at`
  return row ?? null
}

/** Permanent: the subscription and (by cascade) its delivery history. False when there was none. */
export async function deleteSubscription(sql: Sql, projectId: string, subscriptionId: string): Promise<boolean> {
  const removed = await sql`DELETE FROM webhook_subscriptions WHERE id = ${subscriptionId} AND project_id = ${projectId} RETURNING id`
  return removed.length > 0
}

export interface DeliveryRow {
  id: string
  subscription_id: string
  payload: Envelope
  attempt_count: number
  next_attempt_at: Date | null
  response_status: number | null
  response_body: string | null
  status: 'pending' | 'success' | 'failed'
  created_at: Date
  last_attempt_at: Date | null
}

interface DeliveryWindow {
  projectId: string
  subscriptionId: string
  from: Date
  to: Date
  /** Only deliveries in this state, or of this event type, when given. */
  status?: DeliveryRow['status']
  eventType?: string
}

/** The window's conditions, filters included (the subscription_created index serves each). */
const inWindow = (sql: Sql, window: DeliveryWindow) => sql`
  subscription_id = ${window.subscriptionId} AND project_id = ${window.projectId} AND created_at >= ${window.from} AND created_at <= ${window.to}
  ${window.status ? sql`AND status = ${window.status}` : sql``} ${window.eventType ? sql`AND event_type = ${window.eventType}` : sql``}`

/** One page of the deliveries created in [from, to], newest first, each row with the window's total. */
export const DELIVERY_COLUMNS =
  'id, subscription_id, payload, attempt_count, next_attempt_at, response_status, response_body, status, created_at, last_attempt_at'

export function deliveriesPage(sql: Sql, window: DeliveryWindow, page: { limit: number; offset: number }) {
  return sql<Array<DeliveryRow & { total_count: number }>>`
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)}, count(*) OVER ()::int AS total_count
    FROM webhook_deliveries
    WHERE ${inWindow(sql, window)}
    ORDER BY created_at DESC, id DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`
}

export async function deliveryCount(sql: Sql, window: DeliveryWindow): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM webhook_deliveries
    WHERE ${inWindow(sql, window)}`
  return count
}

export async function deliveryById(sql: Sql, projectId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`
    SELECT ${sql.unsafe(DELIVERY_COLUMNS)} FROM webhook_deliveries
    WHERE id = ${deliveryId} AND subscription_id = ${subscriptionId} AND project_id = ${projectId}`
  return row ?? null
}

export async function deliveryExists(sql: Sql, projectId: string, subscriptionId: string, deliveryId: string): Promise<boolean> {
  const [delivery] = await sql`
    SELECT id FROM webhook_deliveries WHERE id = ${deliveryId} AND subscription_id = ${subscriptionId} AND project_id = ${projectId}`
  return Boolean(delivery)
}

export interface AttemptRow {
  id: string
  delivery_id: string
  attempt_number: number
  attempted_at: Date
  response_status: number | null
  response_body: string | null
  error_message: string | null
  duration_ms: number
}

export function attemptsOfDelivery(sql: Sql, deliveryId: string) {
  return sql<AttemptRow[]>`
    SELECT id, delivery_id, attempt_number, attempted_at, response_status, response_body, error_message, duration_ms
    FROM webhook_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt_number`
}

/** Rows still holding a plaintext secret (written before secrets were sealed), with their key owner. */
export function plaintextSecrets(sql: Sql) {
  return sql<(SecretKeyOwner & { secret: string })[]>`
    SELECT subscription.id AS subscription_id, subscription.secret, project.environment_id, environment.wrapped_key AS environment_wrapped_key
    FROM webhook_subscriptions AS subscription
    JOIN projects AS project ON project.id = subscription.project_id
    LEFT JOIN environments AS environment ON environment.id = project.environment_id
    WHERE subscription.secret IS NOT NULL`
}

/** Replaces a plaintext secret with its sealed form (only if it is still that plaintext). */
export async function replacePlaintextSecret(sql: Sql, subscriptionId: string, plaintext: string, sealed: Buffer): Promise<void> {
  await sql`UPDATE webhook_subscriptions SET secret_sealed = ${sealed}, secret = NULL WHERE id = ${subscriptionId} AND secret = ${plaintext}`
}
