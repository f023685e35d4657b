-- Any change that can alter who a key authenticates as, or a user's top-level location, notifies the
-- channel `rhizome_auth`: servers drop their cached authentications at once, whoever made the change
-- (this process, another instance, the CLI or psql). Statement-level, so bulk writes notify once;
-- bookkeeping columns (last_used_at, last_login) do not notify.
CREATE FUNCTION rhizome_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rhizome_auth', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_key_auth_changed AFTER INSERT OR DELETE OR UPDATE OF key_hash, user_id OR TRUNCATE ON api_key
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
CREATE TRIGGER auth_user_auth_changed AFTER INSERT OR DELETE OR UPDATE OF username, is_active, is_superuser OR TRUNCATE ON auth_user
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
CREATE TRIGGER location_permission_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON location_permission
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
-- The default top-level location is the lowest-id root: new roots and re-parenting can change it.
CREATE TRIGGER location_auth_changed AFTER INSERT OR DELETE OR UPDATE OF parent_location_id OR TRUNCATE ON location
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
