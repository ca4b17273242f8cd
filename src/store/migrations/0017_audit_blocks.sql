-- The audit trail is appended in blocks: one row per chain and flush holding that flush's records
-- as a JSON array (each record with its seq, prev_hash and hash), instead of one row per record.
-- A row per record cost 60-90 µs of CPU per request (heap tuple, three indexes, jsonb, 13
-- parameters); a block 20-30 µs (bench/audit-append.mjs), against about 1 ms for an identify. Positions are per chain: a block starts one past its predecessor's end,
-- so two writers appending from the same tail collide on the primary key and the loser re-reads
-- the tail (no lock, the same on PGlite and PostgreSQL). Stored uncompressed (EXTERNAL): pglz on
-- every append cost more than the bytes it saved.
CREATE TABLE audit_blocks (
  chain      text NOT NULL,
  org_id     uuid,
  first_seq  bigint NOT NULL,
  last_seq   bigint NOT NULL,
  first_at   timestamptz NOT NULL,
  last_at    timestamptz NOT NULL,
  last_hash  bytea NOT NULL,
  records    text NOT NULL,
  PRIMARY KEY (chain, first_seq)
);
ALTER TABLE audit_blocks ALTER COLUMN records SET STORAGE EXTERNAL;
CREATE INDEX audit_blocks_time ON audit_blocks (chain, last_at);

-- Records written before: a block of one each, keeping their seq and hashes (the chains verify as before).
INSERT INTO audit_blocks (chain, org_id, first_seq, last_seq, first_at, last_at, last_hash, records)
SELECT coalesce(org_id::text, 'platform'), org_id, seq, seq, created_at, created_at, hash,
  json_build_array(json_build_object(
    'seq', seq, 'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'request_id', request_id, 'project_id', project_id, 'actor_kind', actor_kind, 'actor_id', actor_id, 'action', action,
    'resource_ids', resource_ids, 'status', status, 'client_address', client_address, 'user_agent', user_agent,
    'prev_hash', encode(prev_hash, 'hex'), 'hash', encode(hash, 'hex')))::text
FROM audit_log;
DROP TABLE audit_log;

-- One row per record, for reading (the list, the export, an operator's query).
CREATE VIEW audit_log AS
SELECT r.seq, b.org_id, r.created_at, r.request_id, r.project_id, r.actor_kind, r.actor_id, r.action, r.resource_ids, r.status,
  r.client_address, r.user_agent, decode(r.prev_hash, 'hex') AS prev_hash, decode(r.hash, 'hex') AS hash,
  b.chain, b.first_at AS block_first_at, b.last_at AS block_last_at
FROM audit_blocks b
CROSS JOIN LATERAL json_to_recordset(b.records::json) AS r(
  seq bigint, created_at timestamptz, request_id text, project_id uuid, actor_kind text, actor_id text, action text,
  resource_ids jsonb, status integer, client_address text, user_agent text, prev_hash text, hash text);
