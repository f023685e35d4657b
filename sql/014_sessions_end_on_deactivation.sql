-- Deactivating a user ends every session of theirs, whoever deactivates (the API, the CLI, psql): until
-- now a session was only refused while the user was inactive, and came back when they were reactivated.
CREATE OR REPLACE FUNCTION user_session_end_on_deactivation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_session WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER auth_user_deactivated AFTER UPDATE OF is_active ON auth_user
  FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active) EXECUTE FUNCTION user_session_end_on_deactivation();
