-- A device token's access check reads its device (and the device's project, announced by 0031): a
-- change to what the check reads announces itself on palmvein_access_changed, so the process that
-- serves the embedded database drops its cached device tokens before the change is answered (a
-- disabled device, a rotated token or a relinked terminal fails on the very next request).
-- last_auth_at and last_activity_at, written as terminals work, are not access facts.
CREATE TRIGGER devices_access_changed AFTER UPDATE OF id, token_hash, project_id, enabled, mode OR DELETE OR TRUNCATE
  ON devices FOR EACH STATEMENT EXECUTE FUNCTION palmvein_announce_access_change();
