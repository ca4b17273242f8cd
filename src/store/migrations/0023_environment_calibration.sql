-- Calibration of the match threshold (docs/accuracy.md "Calibration in the service"). An
-- environment given target_fpir has its match_threshold derived from its own non-mated score
-- distribution at its current gallery size, never below min_match_threshold. One row per such
-- environment holds the latest calibration, and the claim of the process computing the next one
-- (several processes on one database calibrate once, not once each).
ALTER TABLE environments
  ADD COLUMN target_fpir double precision CHECK (target_fpir > 0 AND target_fpir < 1),
  ADD COLUMN min_match_threshold double precision NOT NULL DEFAULT 0.5 CHECK (min_match_threshold > 0 AND min_match_threshold <= 1);

CREATE TABLE environment_calibrations (
  environment_id       uuid PRIMARY KEY REFERENCES environments(id) ON DELETE CASCADE,
  claimed_by           text,
  claimed_until        timestamptz,
  -- The latest result (null until the first calibration finishes).
  threshold            double precision,
  derived_threshold    double precision,
  method               text CHECK (method IN ('empirical', 'extreme_value')),
  gallery_size         integer,
  non_mated_samples    integer,
  exceedances          integer,
  estimated_fpir       double precision,
  fpir_low             double precision,
  fpir_high            double precision,
  -- The tail fit (extreme_value): excesses over tail_start of the tail_samples highest scores.
  tail_start           double precision,
  tail_scale           double precision,
  tail_samples         integer,
  -- The settings the result was computed for: a change of either makes it stale.
  target_fpir          double precision,
  min_match_threshold  double precision,
  computed_at          timestamptz
);
