// Webhook subscriptions, deliveries and attempts on the wire (spec "Webhooks"); the secret only in
// the answer that creates a subscription.
import { Nullable, Type } from '../schema.js'

const Time = Type.String({ format: 'date-time' })

export const SubscriptionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Type.Optional(
      Type.Union([Type.Literal('gone'), Type.Literal('failing')], {
        description:
          'extension: present when the service disabled the subscription: gone (the receiver answered 410 Gone) or failing (every delivery failed for 5 days). PATCH enabled: true enables it again',
      }),
    ),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'WebhookSubscription' },
)

export const CreatedSubscriptionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    secret: Type.String({ description: 'whsec_ + 32 random bytes (base64); shown only in this response' }),
    event_types: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    created_at: Time,
  },
  { $id: 'WebhookSubscriptionCreated' },
)

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    subscription_id: Type.String({ format: 'uuid' }),
    payload: Type.Object({
      event_id: Type.String({ format: 'uuid' }),
      timestamp: Time,
      project_id: Type.String({ format: 'uuid' }),
      data: Type.Object({ event_type: Type.String() }, { additionalProperties: true, description: 'the event data, with event_type inside' }),
    }),
    attempt_count: Type.Integer({ minimum: 0 }),
    attempt_pending: Type.Boolean({ description: 'pending with a next attempt scheduled' }),
    response_status: Nullable(Type.Integer()),
    response_body: Nullable(Type.String({ description: 'the last answer, truncated to 100 KB' })),
    status: Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed')]),
    created_at: Time,
    last_attempt_at: Nullable(Time),
  },
  { $id: 'WebhookDelivery' },
)

export const AttemptSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    delivery_id: Type.String({ format: 'uuid' }),
    attempt_number: Type.Integer({ minimum: 1 }),
    attempted_at: Time,
    response_status: Nullable(Type.Integer({ description: 'null when the request timed out or could not connect' })),
    response_body: Nullable(Type.String()),
    error_message: Nullable(Type.String()),
    duration_ms: Type.Integer({ minimum: 0 }),
  },
  { $id: 'WebhookAttempt' },
)
