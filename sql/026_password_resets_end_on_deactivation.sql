-- Deactivating a user ends their open reset links, whoever deactivates (the API, the CLI, psql), as it
-- ends their sessions (sql/014): until now a link was only refused while the user was inactive, and
-- worked again, for whoever held it, once the user was reactivated.
CREATE OR REPLACE FUNCTION password_reset_end_on_deactivation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM password_reset WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER auth_user_deactivated_resets_end AFTER UPDATE OF is_active ON auth_user
  FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active) EXECUTE FUNCTION password_reset_end_on_deactivation();
