-- The audit trail (domain/audit.ts): one record per request that reaches tenant data, changes
-- anything or is refused. Never bodies, captures, secrets or templates. Records are hash-chained
-- per organization (org_id NULL: requests no organization can be attributed to, such as a refused
-- token or a terminal registration): `hash` = SHA-256(prev_hash ‖ content), in `seq` order.
-- Writers hold the chain's advisory lock from reading its last hash to commit.
CREATE TABLE audit_log (
  seq            bigserial PRIMARY KEY,
  org_id         uuid,
  created_at     timestamptz NOT NULL,
  request_id     text NOT NULL,
  project_id     uuid,
  actor_kind     text NOT NULL CHECK (actor_kind IN ('token', 'api_key', 'device', 'anonymous')),
  actor_id       text,
  action         text NOT NULL,
  resource_ids   jsonb NOT NULL,
  status         integer NOT NULL,
  client_address text,
  user_agent     text,
  prev_hash      bytea NOT NULL,
  hash           bytea NOT NULL
);
CREATE INDEX audit_log_chain ON audit_log (org_id, seq);
CREATE INDEX audit_log_org_time ON audit_log (org_id, created_at);

-- Where a chain starts after the retention purge removed its oldest records: the hash of the last
-- record purged, which the first kept record names as its prev_hash.
CREATE TABLE audit_anchors (
  chain      text PRIMARY KEY,
  hash       bytea NOT NULL,
  last_seq   bigint NOT NULL,
  purged_at  timestamptz NOT NULL
);
