-- datapoint's four references (indicator, location, campaign, source_submission) checked once per
-- statement over the distinct ids, instead of by foreign keys, which PostgreSQL checks with one
-- locking lookup per row and key: on a 400,000-row upload they were 5.3 of the 8.1 s of its insert
-- into datapoint (bench/README.md, "Ingestion"). The guarantees stay those of the foreign keys
-- (docs/decisions.md, "datapoint's references"):
-- * a statement that writes datapoint rows fails (23503, the foreign key's message and detail) when
--   one of them names a missing row; the rows it names are locked FOR KEY SHARE until commit, as the
--   row-by-row check locks them, so a concurrent delete waits, then sees the new rows and refuses;
-- * deleting a referenced row, changing its id, or truncating its table without datapoint fails
--   while datapoint rows name it.

ALTER TABLE datapoint
  DROP CONSTRAINT datapoint_indicator_id_fkey,
  DROP CONSTRAINT datapoint_location_id_fkey,
  DROP CONSTRAINT datapoint_campaign_id_fkey,
  DROP CONSTRAINT datapoint_source_submission_id_fkey;

-- Each datapoint column that names another table's ids, with that table.
CREATE FUNCTION datapoint_references(OUT col text, OUT tbl text) RETURNS SETOF record LANGUAGE sql IMMUTABLE AS $$
  VALUES ('indicator_id', 'indicator'), ('location_id', 'location'), ('campaign_id', 'campaign'),
    ('source_submission_id', 'source_submission')
$$;

-- Writes: `new_rows` is the statement's transition table (inserted or updated rows).
CREATE FUNCTION datapoint_check_references() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  reference record;
  missing integer;
BEGIN
  FOR reference IN SELECT * FROM datapoint_references()
  LOOP
    -- Lock first, then look: a row deleted by a transaction that committed while we waited for its
    -- lock is not locked, and the next statement (a new snapshot) no longer sees it.
    EXECUTE format('SELECT 1 FROM %I WHERE id IN (SELECT %I FROM new_rows) FOR KEY SHARE', reference.tbl, reference.col);
    EXECUTE format('SELECT n.%1$I FROM (SELECT DISTINCT %1$I FROM new_rows WHERE %1$I IS NOT NULL) n
      WHERE NOT EXISTS (SELECT 1 FROM %2$I r WHERE r.id = n.%1$I) LIMIT 1', reference.col, reference.tbl) INTO missing;
    IF missing IS NOT NULL THEN
      RAISE foreign_key_violation USING
        MESSAGE = format('insert or update on table "datapoint" violates foreign key constraint "datapoint_%s_fkey"', reference.col),
        DETAIL = format('Key (%s)=(%s) is not present in table "%s".', reference.col, missing, reference.tbl),
        TABLE = 'datapoint', CONSTRAINT = format('datapoint_%s_fkey', reference.col);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER datapoint_references_on_insert AFTER INSERT ON datapoint
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION datapoint_check_references();
CREATE TRIGGER datapoint_references_on_update AFTER UPDATE ON datapoint
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION datapoint_check_references();

-- The referenced side: each trigger's argument is the datapoint column that names its table's ids.
CREATE FUNCTION datapoint_refuse_referenced(table_name text, column_name text, referenced_id integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE foreign_key_violation USING
    MESSAGE = format('update or delete on table "%s" violates foreign key constraint "datapoint_%s_fkey" on table "datapoint"', table_name, column_name),
    DETAIL = format('Key (id)=(%s) is still referenced from table "datapoint".', referenced_id),
    TABLE = 'datapoint', CONSTRAINT = format('datapoint_%s_fkey', column_name);
END;
$$;

-- Deletes: `old_rows` is the statement's transition table (the deleted rows).
CREATE FUNCTION datapoint_referenced_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  referenced integer;
BEGIN
  EXECUTE format('SELECT o.id FROM old_rows o WHERE EXISTS (SELECT 1 FROM datapoint d WHERE d.%I = o.id) LIMIT 1', TG_ARGV[0])
    INTO referenced;
  IF referenced IS NOT NULL THEN PERFORM datapoint_refuse_referenced(TG_TABLE_NAME, TG_ARGV[0], referenced); END IF;
  RETURN NULL;
END;
$$;

-- A changed id (per row; the trigger's WHEN clause keeps every other update free of it).
CREATE FUNCTION datapoint_referenced_id_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  referenced boolean;
BEGIN
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM datapoint WHERE %I = $1)', TG_ARGV[0]) INTO referenced USING OLD.id;
  IF referenced THEN PERFORM datapoint_refuse_referenced(TG_TABLE_NAME, TG_ARGV[0], OLD.id); END IF;
  RETURN NULL;
END;
$$;

-- TRUNCATE skips delete triggers: after it, datapoint must not name the emptied table (truncating
-- datapoint in the same command is fine: AFTER TRUNCATE triggers run once every table is empty).
CREATE FUNCTION datapoint_referenced_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  referenced integer;
BEGIN
  EXECUTE format('SELECT %1$I FROM datapoint WHERE %1$I IS NOT NULL LIMIT 1', TG_ARGV[0]) INTO referenced;
  IF referenced IS NOT NULL THEN PERFORM datapoint_refuse_referenced(TG_TABLE_NAME, TG_ARGV[0], referenced); END IF;
  RETURN NULL;
END;
$$;

DO $$
DECLARE
  reference record;
BEGIN
  FOR reference IN SELECT * FROM datapoint_references()
  LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION datapoint_referenced_deleted(%L)', reference.tbl || '_datapoint_deleted', reference.tbl, reference.col);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE OF id ON %I FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id)
      EXECUTE FUNCTION datapoint_referenced_id_changed(%L)', reference.tbl || '_datapoint_id_changed', reference.tbl, reference.col);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I
      FOR EACH STATEMENT EXECUTE FUNCTION datapoint_referenced_truncated(%L)', reference.tbl || '_datapoint_truncated', reference.tbl, reference.col);
  END LOOP;
END;
$$;
