-- The rows an API key's access check reads (the key, the project the path names, its environment
-- and that environment's owner) announce every change on palmvein_access_changed. The process that
-- serves the embedded database caches those checks and drops the cache when it hears this, before
-- the changing statement is answered (store/pglite-activity.ts): a revoked key still fails on the
-- very next request. last_used_at, written once a minute per key, is not an access fact.
CREATE FUNCTION palmvein_announce_access_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('palmvein_access_changed', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER api_keys_access_changed AFTER UPDATE OF id, org_id, secret_hash, project_ids, revoked_at OR DELETE OR TRUNCATE
  ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION palmvein_announce_access_change();
CREATE TRIGGER projects_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON projects FOR EACH STATEMENT EXECUTE FUNCTION palmvein_announce_access_change();
CREATE TRIGGER environments_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON environments FOR EACH STATEMENT EXECUTE FUNCTION palmvein_announce_access_change();
CREATE TRIGGER organizations_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON organizations FOR EACH STATEMENT EXECUTE FUNCTION palmvein_announce_access_change();
