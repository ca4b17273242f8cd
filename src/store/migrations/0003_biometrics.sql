-- Biometrics (issue 5): galleries load an environment's reference templates in id order, one
-- page at a time (keyset pagination), so the page query must not sort the whole environment.
CREATE INDEX palm_templates_environment_reference_id ON palm_templates (environment_id, id) WHERE kind = 'reference';

-- A member's templates are replaced per hand on re-enrollment.
CREATE INDEX palm_templates_member_hand ON palm_templates (member_id, hand);
