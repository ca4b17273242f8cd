-- Webhook recovery. A delivery may be sent again as a new delivery of the same event (resend,
-- recover): only the first delivery of an event to a subscription is unique (the fan-out stays
-- idempotent), a resend names the delivery it repeats. A subscription the service disabled (the
-- receiver answered 410 Gone, or every delivery failed for 5 days) says why; failing_since is the
-- first failed attempt since its last success.
ALTER TABLE webhook_deliveries ADD COLUMN resend_of uuid;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_subscription_id_event_id_key;
CREATE UNIQUE INDEX webhook_deliveries_first ON webhook_deliveries (subscription_id, event_id) WHERE resend_of IS NULL;
CREATE INDEX webhook_deliveries_subscription_failed ON webhook_deliveries (subscription_id, created_at) WHERE status = 'failed';

ALTER TABLE webhook_subscriptions ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('gone', 'failing'));
ALTER TABLE webhook_subscriptions ADD COLUMN failing_since timestamptz;
