-- The audit trail keyed (domain/audit-keys.ts): records written from now on link by HMAC-SHA256
-- under an audit key derived from the master key (which the database does not hold), their
-- content covering their chain and position; retention anchors carry a MAC under the same key;
-- signed checkpoints (Ed25519) pin where each chain was, for export.
--
-- Rows written before stay as they are (their SHA-256 links verify as before); key_id NULL marks
-- them. The first start with a master key signs a checkpoint at the end of every such chain and
-- MACs its anchor (domain/audit-adoption.ts): from then on, the unkeyed records are pinned by the
-- keyed records and checkpoints after them.

-- One row per audit key: its public half (checkpoint signatures) and its secret, wrapped by the
-- master key as a key set (master-keys.ts), so master key rotation carries it to the new key.
CREATE TABLE audit_keys (
  key_id         text PRIMARY KEY,
  public_key     bytea NOT NULL,
  secret_sealed  bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- The key whose MACs a block's records carry; NULL: written before the trail was keyed (SHA-256).
ALTER TABLE audit_blocks ADD COLUMN key_id text;

ALTER TABLE audit_anchors ADD COLUMN key_id text, ADD COLUMN mac bytea;

-- A signed statement that a chain's record `seq` has hash `hash` (what `palmvein audit checkpoints`
-- exports). The signature covers every column but itself.
CREATE TABLE audit_checkpoints (
  chain      text NOT NULL,
  seq        bigint NOT NULL,
  hash       bytea NOT NULL,
  signed_at  timestamptz NOT NULL,
  key_id     text NOT NULL,
  signature  bytea NOT NULL,
  PRIMARY KEY (chain, seq)
);

-- The list and the export check the MAC of every record they show: the view gives its key.
CREATE OR REPLACE VIEW audit_log AS
SELECT r.seq, b.org_id, r.created_at, r.request_id, r.project_id, r.actor_kind, r.actor_id, r.action, r.resource_ids, r.status,
  r.client_address, r.user_agent, decode(r.prev_hash, 'hex') AS prev_hash, decode(r.hash, 'hex') AS hash,
  b.chain, b.first_at AS block_first_at, b.last_at AS block_last_at, b.key_id
FROM audit_blocks b
CROSS JOIN LATERAL json_to_recordset(b.records::json) AS r(
  seq bigint, created_at timestamptz, request_id text, project_id uuid, actor_kind text, actor_id text, action text,
  resource_ids jsonb, status integer, client_address text, user_agent text, prev_hash text, hash text);
