// Webhooks (spec "Webhooks"): subscriptions, the test event, delivery history and attempts.
// Every route has project access (resolved before the handler), so a foreign project answers 404
// before any URL is resolved.
import type { AppContext } from '../../app-context.js'
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listAttempts,
  listDeliveries,
  listSubscriptions,
  sendTestEvent,
  updateSubscription,
  type WebhookDeps,
} from '../../domain/webhooks/webhooks.js'
import { recoverFailedDeliveries, resendDelivery } from '../../domain/webhooks/webhook-recovery.js'
import { AttemptSchema, CreatedSubscriptionSchema, DeliverySchema, SubscriptionSchema } from '../resources/webhooks.js'
import { defineRoute, type Route } from '../route.js'
import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType } from '../../webhooks/outbox.js'
import { Body, Pagination, pattern, PathIds, requireOrderedWindow, Text, TimeWindow, Type, withErrorCode } from '../schema.js'

const tags = ['Webhooks']
const deps = (app: AppContext): WebhookDeps => ({ db: app.db, guard: app.webhooks.guard, secrets: app.webhooks.secrets })

// The scheme is the document's; that the host is public (resolved at creation and at every
// delivery) is the SSRF guard's, which the document can only say in words. Either way 422.
const URL_PATTERN = pattern('^[Hh][Tt][Tt][Pp][Ss]?://[^\\u0000]*$', 'must be an absolute https URL')
const Url = withErrorCode(
  'webhook_url_rejected',
  Type.String({
    minLength: 1,
    maxLength: 2048,
    pattern: URL_PATTERN,
    description:
      'HTTPS URL of a public host (plain HTTP only to localhost with WEBHOOK_ALLOW_LOCALHOST, outside production); ' +
      'a host that does not resolve, or resolves to a private, loopback or link-local address, is 422 webhook_url_rejected',
  }),
)
// A plain enum rather than a union of literals: its one error carries the code.
const EventType = withErrorCode('event_type_not_allowed', Type.Unsafe<SubscribableEventType>({ type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] }))
const EventTypes = Type.Array(EventType, {
  minItems: 1,
  maxItems: 10,
  description: `allowed: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}; any other value is 422 event_type_not_allowed`,
})

const ProjectParams = PathIds('project_id')
const WebhookParams = PathIds('project_id', 'webhook_id')
const base = '/v1/projects/:project_id/webhooks'
const refusals = [{ status: 422, description: 'webhook_url_rejected, event_type_not_allowed or webhook_limit_reached (25 per project)' }]

export const webhookRoutes: Route[] = [
  defineRoute({
    operationId: 'listWebhooks',
    method: 'get',
    path: base,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'List the webhook subscriptions of the project (without secrets)',
    params: ProjectParams,
    responses: [{ status: 200, description: 'subscriptions, oldest first', schema: Type.Array(SubscriptionSchema) }],
    async handler(context) {
      const { project } = context
      return listSubscriptions(deps(context.app), project.id)
    },
  }),
  defineRoute({
    operationId: 'createWebhook',
    method: 'post',
    path: base,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Create a webhook subscription; the secret is in this response only',
    params: ProjectParams,
    body: Body({ url: Url, event_types: EventTypes, enabled: Type.Optional(Type.Boolean({ default: true })) }),
    responses: [{ status: 201, description: 'the subscription with its secret', schema: CreatedSubscriptionSchema }, ...refusals],
    async handler(context) {
      const { project } = context
      return createSubscription(deps(context.app), project.id, context.body)
    },
  }),
  defineRoute({
    operationId: 'getWebhook',
    method: 'get',
    path: `${base}/:webhook_id`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Read a webhook subscription (without secret)',
    params: WebhookParams,
    responses: [{ status: 200, description: 'the subscription', schema: SubscriptionSchema }],
    async handler(context) {
      const { project } = context
      return getSubscription(deps(context.app), project.id, context.params.webhook_id)
    },
  }),
  defineRoute({
    operationId: 'updateWebhook',
    method: 'patch',
    path: `${base}/:webhook_id`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Change the url, event_types or enabled of a subscription (same rules as creation)',
    params: WebhookParams,
    body: Body({ url: Type.Optional(Url), event_types: Type.Optional(EventTypes), enabled: Type.Optional(Type.Boolean()) }),
    responses: [{ status: 200, description: 'the subscription', schema: SubscriptionSchema }, ...refusals],
    async handler(context) {
      const { project } = context
      return updateSubscription(deps(context.app), project.id, context.params.webhook_id, context.body)
    },
  }),
  defineRoute({
    operationId: 'deleteWebhook',
    method: 'delete',
    path: `${base}/:webhook_id`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Delete a subscription and its delivery history, permanently',
    params: WebhookParams,
    responses: [{ status: 204, description: 'deleted' }],
    async handler(context) {
      const { project } = context
      await deleteSubscription(deps(context.app), project.id, context.params.webhook_id)
      return undefined
    },
  }),
  defineRoute({
    operationId: 'testWebhook',
    method: 'post',
    path: `${base}/:webhook_id/test`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Send a webhook.test event to this subscription, signed and retried like real events',
    params: WebhookParams,
    responses: [
      {
        status: 200,
        description: 'the test event is queued',
        schema: Type.Object({ test_id: Type.String({ format: 'uuid' }), message: Type.String() }, { $id: 'WebhookTest' }),
      },
    ],
    async handler(context) {
      const { project } = context
      return sendTestEvent(deps(context.app), project.id, context.params.webhook_id)
    },
  }),
  defineRoute({
    operationId: 'listWebhookDeliveries',
    method: 'get',
    path: `${base}/:webhook_id/deliveries`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Deliveries of the subscription created in [from, to], newest first, one page; optionally only those in one status or of one event type',
    params: WebhookParams,
    query: Type.Object(
      {
        ...TimeWindow,
        ...Pagination(1000),
        status: Type.Optional(
          Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed')], { description: 'only deliveries in this state' }),
        ),
        event_type: Type.Optional(
          Text({ minLength: 1, maxLength: 100, description: 'only deliveries of this event type (enrollment.completed, demo.scan.success, webhook.test)' }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: [
      {
        status: 200,
        description: 'one page of deliveries and the total in the window',
        schema: Type.Object({ items: Type.Array(DeliverySchema), total_count: Type.Integer({ minimum: 0 }) }, { $id: 'WebhookDeliveryPage' }),
      },
    ],
    checkInput: requireOrderedWindow,
    async handler(context) {
      return listDeliveries(deps(context.app), context.project.id, context.params.webhook_id, context.query)
    },
  }),
  defineRoute({
    operationId: 'listWebhookDeliveryAttempts',
    method: 'get',
    path: `${base}/:webhook_id/deliveries/:delivery_id/attempts`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Attempts of one delivery, first to last',
    params: PathIds('project_id', 'webhook_id', 'delivery_id'),
    responses: [{ status: 200, description: 'attempts', schema: Type.Array(AttemptSchema) }],
    async handler(context) {
      const { project } = context
      return listAttempts(deps(context.app), project.id, context.params.webhook_id, context.params.delivery_id)
    },
  }),
  defineRoute({
    operationId: 'resendWebhookDelivery',
    method: 'post',
    path: `${base}/:webhook_id/deliveries/:delivery_id/resend`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    extension: true,
    summary: 'Send a delivery again: a new delivery of the same event (same event_id, so receivers can deduplicate), attempted now and retried like any',
    params: PathIds('project_id', 'webhook_id', 'delivery_id'),
    responses: [
      { status: 201, description: 'the new delivery', schema: DeliverySchema },
      { status: 409, description: 'webhook_disabled: enable the subscription first' },
    ],
    async handler(context) {
      return resendDelivery(deps(context.app), context.project.id, context.params.webhook_id, context.params.delivery_id)
    },
  }),
  defineRoute({
    operationId: 'recoverWebhookDeliveries',
    method: 'post',
    path: `${base}/:webhook_id/recover`,
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    extension: true,
    summary:
      'Send again every failed delivery created since a time (each failure once: one already sent again is skipped), as new deliveries of the same events',
    params: WebhookParams,
    body: Body({ since: Type.String({ format: 'date-time', description: 'failed deliveries created at or after this time are sent again' }) }),
    responses: [
      {
        status: 200,
        description: 'how many deliveries were sent again',
        schema: Type.Object({ resent: Type.Integer({ minimum: 0 }) }, { $id: 'WebhookRecovery' }),
      },
      { status: 409, description: 'webhook_disabled: enable the subscription first' },
    ],
    async handler(context) {
      return recoverFailedDeliveries(deps(context.app), context.project.id, context.params.webhook_id, context.body.since)
    },
  }),
]
