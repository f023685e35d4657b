-- A change notification names its table as `schema.table`, so a cache can forget only what read it
-- (lib/api/read-cache.ts: a data entry must not empty the indicator list, nor a key's minutely
-- last_used_at every list), and only in the schema it serves. Notifications with the same payload in one
-- transaction still fold into one at commit.
CREATE OR REPLACE FUNCTION rhizome_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rhizome_data', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
