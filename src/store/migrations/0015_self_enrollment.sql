-- Public self-enrollment into a global environment (domain/self-enrollment.ts). A person (an
-- identity-token subject) owns at most one member per environment; their kiosk session carries
-- the subject, the name they chose, and the count of wrong confirmation codes typed on their phone.
ALTER TABLE members ADD COLUMN owner_subject text;
CREATE UNIQUE INDEX members_owner_per_environment ON members (environment_id, owner_subject) WHERE owner_subject IS NOT NULL;
CREATE INDEX members_owner ON members (owner_subject) WHERE owner_subject IS NOT NULL;

ALTER TABLE enrollment_sessions
  ADD COLUMN owner_subject text,
  ADD COLUMN display_name text,
  ADD COLUMN challenge_failures integer NOT NULL DEFAULT 0;
CREATE INDEX enrollment_sessions_owner ON enrollment_sessions (owner_subject) WHERE owner_subject IS NOT NULL;
