-- The calibration's mated side: each sampled identify capture also scores against its own member,
-- which gives the FNIR at the threshold and the environment's DET curve (domain/accuracy/det.ts).
-- Null on calibrations computed before this migration, until the next one.
ALTER TABLE environment_calibrations
  ADD COLUMN mated_samples integer,
  ADD COLUMN fnir double precision,
  ADD COLUMN fnir_low double precision,
  ADD COLUMN fnir_high double precision,
  ADD COLUMN det jsonb;
