-- Deactivating a user ends her API keys too, whoever deactivates (the API, the CLI, psql), as it ends
-- her sessions (sql/014): until now a key was refused only while she was inactive, and worked again
-- when she was reactivated, though whoever deactivated her may have done it because a key leaked.
-- Reactivated, she (or a superuser) makes new keys.
CREATE OR REPLACE FUNCTION api_key_end_on_deactivation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM api_key WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER auth_user_deactivated_keys AFTER UPDATE OF is_active ON auth_user
  FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active) EXECUTE FUNCTION api_key_end_on_deactivation();
