-- Webhook secrets at rest (domain/webhook-secrets.ts): sealed with AES-256-GCM under the project's
-- environment key (the master key for a project without one), opened only to sign a delivery.
-- `secret` keeps the plaintext of rows written before this migration until the service seals them
-- at its next start; no new row has it.
ALTER TABLE webhook_subscriptions
  ADD COLUMN secret_sealed bytea,
  ALTER COLUMN secret DROP NOT NULL,
  ADD CONSTRAINT webhook_subscriptions_secret_kept CHECK (secret IS NOT NULL OR secret_sealed IS NOT NULL);
