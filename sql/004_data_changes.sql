-- Any change to any table notifies the channel `rhizome_data`: servers drop their cached detail
-- representations (plugins/dispatcher.ts) at once, whoever made the change (this process, another
-- instance, the CLI, the pipeline or psql). Statement-level, so a bulk write notifies once, and
-- notifications of one transaction are folded into one at commit.
-- A table created by a later migration must get the same trigger (test/detail-cache.test.ts checks
-- that every table has it).
CREATE FUNCTION rhizome_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rhizome_data', '');
  RETURN NULL;
END;
$$;

DO $$
DECLARE
  name text;
BEGIN
  FOR name IN
    SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname NOT LIKE 'kysely_migration%'
  LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed()',
      name || '_data_changed', name);
  END LOOP;
END;
$$;
