-- Two indexes duplicated by wider ones with the same leading columns: palm_templates_member_hand
-- (member_id, hand) serves every lookup by member, palm_templates_environment_reference_id
-- (environment_id, id) WHERE kind = 'reference' every lookup of an environment's references. Each
-- cost an index insert per template row (six per member) on enroll and import.
DROP INDEX IF EXISTS palm_templates_member;
DROP INDEX IF EXISTS palm_templates_environment_reference;
