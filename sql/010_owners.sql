-- Charts and dashboards have an owner: the user who made them. The owner, superusers and metadata
-- editors change and delete them; everyone reads them (lib/engine/access.ts, assertOwner). Rows made
-- before owners existed belong to the first superuser; a deleted owner leaves the row to superusers
-- and metadata editors.
ALTER TABLE custom_chart ADD COLUMN owner_id integer REFERENCES auth_user (id) ON DELETE SET NULL;
ALTER TABLE custom_dashboard ADD COLUMN owner_id integer REFERENCES auth_user (id) ON DELETE SET NULL;
UPDATE custom_chart SET owner_id = (SELECT min(id) FROM auth_user WHERE is_superuser);
UPDATE custom_dashboard SET owner_id = (SELECT min(id) FROM auth_user WHERE is_superuser);
CREATE INDEX custom_chart_owner ON custom_chart (owner_id);
CREATE INDEX custom_dashboard_owner ON custom_dashboard (owner_id);
