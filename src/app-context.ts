// Long-lived resources built once by the composition root (server.ts) and handed to every route:
// what domain rules take (DomainResources) and what only the HTTP layer uses besides.
import type { ApiKeyLookup } from './auth/api-key-lookup.js'
import type { DeviceTokenLookup } from './auth/device-token-lookup.js'
import type { IdentityTokens } from './auth/identity-tokens.js'
import type { UsageTouch } from './auth/usage-touch.js'
import type { ClusterNode } from './cluster/node.js'
import type { PeerClient } from './cluster/peer-client.js'
import type { AuditTrail } from './domain/audit/audit.js'
import type { DomainResources } from './domain/resources.js'
import type { HealthCheck } from './health.js'
import type { TrafficWindow } from './metrics/traffic-window.js'
import type { WebhookEngine } from './webhooks/index.js'

export interface AppContext extends DomainResources {
  tokens: IdentityTokens
  /** Reads an API key with the project its request names (cached where the database allows). */
  apiKeys: ApiKeyLookup
  /** Writes an API key's last_used_at, at most once a minute. */
  apiKeyUsage: UsageTouch
  /** Reads a device token's device with its project (cached where the database allows). */
  deviceTokens: DeviceTokenLookup
  /** Writes a device's last_auth_at, at most once a minute. */
  deviceAuthUsage: UsageTouch
  /** Checks behind /healthz; modules register theirs at boot. */
  health: HealthCheck[]
  /** Webhook dispatcher and delivery worker; its guard checks subscription URLs. */
  webhooks: WebhookEngine
  /** The audit trail: every request that reaches tenant data, changes anything or is refused. */
  audit: AuditTrail
  /** This process's requests and identify latencies of the last minutes (the operator API's charts). */
  traffic: TrafficWindow
  /** Cluster mode: this node, and the signed calls that gather its peers' traffic. */
  clusterNode?: ClusterNode
  peers?: Pick<PeerClient, 'traffic'>
}
