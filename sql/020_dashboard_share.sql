-- Read-only links to a dashboard for people without an account (docs/decisions.md, "Shared
-- dashboards"): whoever holds the link sees the dashboard as its creator may see it now, within the
-- link's location. Only the token's sha256 is kept. A change notifies `rhizome_auth`, so every
-- server forgets a revoked link at once, as it forgets a revoked key.
CREATE TABLE IF NOT EXISTS dashboard_share (
  id serial PRIMARY KEY,
  dashboard_id integer NOT NULL REFERENCES custom_dashboard ON DELETE CASCADE,
  created_by_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  location_id integer NULL REFERENCES location ON DELETE CASCADE,
  token_hash char(64) NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NULL
);
CREATE INDEX IF NOT EXISTS dashboard_share_dashboard ON dashboard_share (dashboard_id);
CREATE INDEX IF NOT EXISTS dashboard_share_created_by ON dashboard_share (created_by_id);

CREATE OR REPLACE TRIGGER dashboard_share_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dashboard_share
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
CREATE OR REPLACE TRIGGER dashboard_share_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dashboard_share
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
