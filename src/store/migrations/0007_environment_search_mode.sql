-- How identify searches an environment's gallery (DECISIONS "Palm captures and matching"):
-- exact, two_stage (a sign-bit scan keeps `candidates` rows per probe, scored exactly), or auto
-- (two-stage from 262 144 rows per hand).
ALTER TABLE environments
  ADD COLUMN search_mode text NOT NULL DEFAULT 'auto' CHECK (search_mode IN ('exact', 'two_stage', 'auto')),
  ADD COLUMN candidates integer NOT NULL DEFAULT 256 CHECK (candidates BETWEEN 1 AND 65536);
