-- One-time password reset links (docs/decisions.md, "Passwords without email"): an administrator
-- issues one for a user; whoever holds it sets that user's password once, before it expires. Only the
-- token's sha256 is kept, as for keys and sessions. A password set (by the link or otherwise) ends
-- the user's sessions (sql/013) and their open links.
CREATE TABLE IF NOT EXISTS password_reset (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  token_hash char(64) NOT NULL UNIQUE,
  created_by_id integer NULL REFERENCES auth_user ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS password_reset_user ON password_reset (user_id);

CREATE OR REPLACE FUNCTION password_reset_end_on_password() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM password_reset WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER auth_user_password_resets_end AFTER UPDATE OF password_hash ON auth_user
  FOR EACH ROW WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash) EXECUTE FUNCTION password_reset_end_on_password();
CREATE OR REPLACE TRIGGER password_reset_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON password_reset
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
