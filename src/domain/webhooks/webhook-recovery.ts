// Webhook recovery, as Svix users expect: send one delivery again, or every failed delivery since a
// time, each as a new delivery of the same event (same event_id, so receivers deduplicate). A
// disabled subscription is refused (409 webhook_disabled): its deliveries would only wait.
import { ServiceError, notFound } from '../../errors.js'
import * as recovery from '../../store/webhook-recovery.js'
import { subscriptionById } from '../../store/webhook-subscriptions.js'
import { DELIVERIES_CHANNEL } from '../../webhooks/outbox.js'
import { deliveryItem, parseTime, type DeliveryItem, type WebhookDeps } from './webhooks.js'

async function enabledSubscription(deps: WebhookDeps, projectId: string, subscriptionId: string): Promise<void> {
  const subscription = await subscriptionById(deps.db.sql, projectId, subscriptionId)
  if (!subscription) throw notFound('Webhook subscription')
  if (!subscription.enabled)
    throw new ServiceError('webhook_disabled', 'the subscription is disabled: enable it (PATCH enabled: true) before sending deliveries again')
}

/** Wakes the delivery workers of every process now rather than at their next poll. */
const wakeWorkers = (deps: WebhookDeps) => deps.db.notify(DELIVERIES_CHANNEL, '')

export async function resendDelivery(deps: WebhookDeps, projectId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryItem> {
  await enabledSubscription(deps, projectId, subscriptionId)
  const resent = await recovery.resendDelivery(deps.db.sql, { projectId, subscriptionId, deliveryId }, new Date())
  if (!resent) throw notFound('Webhook delivery')
  // The delivery as created: read after waking the workers, a fast receiver had already answered it.
  await wakeWorkers(deps)
  return deliveryItem(resent)
}

export async function recoverFailedDeliveries(deps: WebhookDeps, projectId: string, subscriptionId: string, since: string): Promise<{ resent: number }> {
  const from = parseTime(since, 'since')
  await enabledSubscription(deps, projectId, subscriptionId)
  const resent = await recovery.resendFailedSince(deps.db.sql, { projectId, subscriptionId }, from, new Date())
  if (resent > 0) await wakeWorkers(deps)
  return { resent }
}
