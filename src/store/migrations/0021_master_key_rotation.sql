-- Master key rotation. While a rotation runs (rotate-master done, retire-master not yet), every
-- blob wrapped by the master key (environment keys, webhook secrets of projects without an
-- environment) holds one wrapping per master key, and this row holds each key wrapped by the
-- other: a process started with either key learns the other and wraps new blobs under both.
-- retire-master drops the old wrappings and this row; the old key then opens nothing.
CREATE TABLE master_key_rotation (
  singleton          boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  old_key_id         text NOT NULL,
  new_key_id         text NOT NULL,
  new_key_under_old  bytea NOT NULL,
  old_key_under_new  bytea NOT NULL,
  started_at         timestamptz NOT NULL DEFAULT now()
);
