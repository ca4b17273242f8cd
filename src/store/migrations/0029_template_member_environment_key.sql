-- A template's environment is its member's: one foreign key on (member_id, environment_id) says
-- so, where two (member_id, and environment_id alone) only said that each exists. Each key is
-- checked per inserted row, and with six template rows a member the two checks were more than
-- half of PostgreSQL's work in an import; the one key costs a check a row and an index entry a
-- member.
CREATE UNIQUE INDEX members_id_environment ON members (id, environment_id);
ALTER TABLE members ADD CONSTRAINT members_id_environment_key UNIQUE USING INDEX members_id_environment;
ALTER TABLE palm_templates
  DROP CONSTRAINT palm_templates_member_id_fkey,
  DROP CONSTRAINT palm_templates_environment_id_fkey,
  ADD CONSTRAINT palm_templates_member_environment_fkey FOREIGN KEY (member_id, environment_id) REFERENCES members (id, environment_id) ON DELETE CASCADE;
