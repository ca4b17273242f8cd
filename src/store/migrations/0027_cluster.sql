-- Cluster mode (docs/scale-out.md): nodes that serve one database register here with a heartbeat,
-- and each holds shards of environments under a lease. A member's shard is
-- palmvein_shard_of(member_id, shards): the first 32 bits of md5(member id as text), unsigned,
-- modulo the environment's shards (src/cluster/shard-of.ts computes the same).
ALTER TABLE environments ADD COLUMN shards integer NOT NULL DEFAULT 1 CHECK (shards BETWEEN 1 AND 1024);

CREATE FUNCTION palmvein_shard_of(member uuid, shards integer) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (('x' || substr(md5(member::text), 1, 8))::bit(32)::bigint % shards)::integer $$;

CREATE TABLE cluster_nodes (
  node_id       text PRIMARY KEY,
  url           text NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  -- Past its PALMVEIN_NODE_MEMORY_BYTES: other nodes leave it out when they assign shards.
  memory_full   boolean NOT NULL DEFAULT false,
  memory_bytes  bigint NOT NULL DEFAULT 0
);

-- A node's hold on a shard: 'loading' until its rows are in memory, then 'ready' (searched).
CREATE TABLE cluster_shards (
  environment_id  uuid NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  shard           integer NOT NULL,
  node_id         text NOT NULL REFERENCES cluster_nodes(node_id) ON DELETE CASCADE,
  state           text NOT NULL CHECK (state IN ('loading', 'ready')),
  rows            integer NOT NULL DEFAULT 0,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (environment_id, shard, node_id)
);
CREATE INDEX cluster_shards_node ON cluster_shards (node_id);
