-- The change log of the galleries: one row per member whose reference rows were written or
-- deleted, holding the number of its latest change. A service process reads the rows past the last
-- number it applied to catch up on what its LISTEN connection missed, and, under the
-- environment's advisory lock, on what other processes committed before a duplicate-palm check.
-- Writers hold that lock from taking a number to commit, so within one environment the numbers
-- become visible in order and "everything up to N" is a sound watermark.
CREATE SEQUENCE gallery_change_seq;
CREATE TABLE gallery_changes (
  environment_id uuid NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  member_id      uuid NOT NULL,
  seq            bigint NOT NULL,
  PRIMARY KEY (environment_id, member_id)
);
CREATE INDEX gallery_changes_by_seq ON gallery_changes (environment_id, seq);
