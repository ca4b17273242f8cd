// Webhook signing secrets at rest: sealed (AES-256-GCM) under the project's environment key, or
// the master key for a project without an environment, bound to the subscription id. A database
// dump alone cannot sign a webhook; the secret is opened only to sign a delivery.
import type { Queryable, Sql } from '../store/engine/database.js'
import { plaintextSecrets, replacePlaintextSecret, type SecretKeyOwner as SecretOwner } from '../store/webhook-subscriptions.js'
import type { Keyring } from './keyring.js'

export interface WebhookSecrets {
  /** Call before `seal`: learns whether a master key rotation is under way. */
  prepare(sql: Queryable): Promise<void>
  seal(owner: SecretOwner, secret: string): Buffer
  /** The secret of a stored row: sealed, or the plaintext of a row from before sealing. */
  open(owner: SecretOwner, stored: { secret_sealed: Buffer | null; secret: string | null }): string
}

const context = (subscriptionId: string) => `webhook-secret:${subscriptionId}`

export function createWebhookSecrets(keyring: Keyring): WebhookSecrets {
  const keyOf = (owner: SecretOwner) =>
    owner.environment_id && owner.environment_wrapped_key ? keyring.environmentKey(owner.environment_id, owner.environment_wrapped_key) : undefined
  return {
    prepare: (sql) => keyring.refreshMasterKeys(sql),
    seal: (owner, secret) => keyring.seal(Buffer.from(secret, 'utf8'), keyOf(owner), context(owner.subscription_id)),
    open(owner, stored) {
      if (stored.secret_sealed) return keyring.unwrap(stored.secret_sealed, keyOf(owner), context(owner.subscription_id)).toString('utf8')
      if (stored.secret !== null) return stored.secret
      throw new Error(`webhook subscription ${owner.subscription_id} has no secret`)
    },
  }
}

/** Seals the secrets stored in plaintext before sealing existed (at start; returns how many). */
export async function sealPlaintextSecrets(sql: Sql, secrets: WebhookSecrets): Promise<number> {
  const rows = await plaintextSecrets(sql)
  if (rows.length > 0) await secrets.prepare(sql)
  for (const row of rows) await replacePlaintextSecret(sql, row.subscription_id, row.secret, secrets.seal(row, row.secret))
  return rows.length
}
