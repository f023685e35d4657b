-- Sign-in for people (docs/decisions.md, "Sessions"): a password per user (scrypt, lib/data/passwords.ts;
-- null: this user signs in with API keys only) and the sessions a sign-in opens, kept here so that
-- signing out, a password change or a deactivated user ends them in every process at once.
ALTER TABLE auth_user ADD COLUMN IF NOT EXISTS password_hash text NULL;

CREATE TABLE IF NOT EXISTS user_session (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  -- sha256 of the cookie's token, as api_key keeps only a key's hash.
  token_hash char(64) NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS user_session_user ON user_session (user_id);

-- A new password ends the user's sessions, whoever set it (the API, the CLI, psql).
CREATE OR REPLACE FUNCTION user_session_end_on_password() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_session WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER auth_user_password_changed AFTER UPDATE OF password_hash ON auth_user
  FOR EACH ROW WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash) EXECUTE FUNCTION user_session_end_on_password();

-- Servers cache authentications (plugins/auth.ts): an ended session must be dropped everywhere at once.
CREATE OR REPLACE TRIGGER user_session_auth_changed AFTER DELETE OR UPDATE OF user_id, token_hash OR TRUNCATE ON user_session
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
CREATE OR REPLACE TRIGGER user_session_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_session
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
