-- Each value's history summed up once per campaign (lib/engine/outliers.ts). A campaign's outliers
-- are its raw values against their location's last `history` values of the indicator before it: a
-- count, a mean and a standard deviation per location and indicator. Grouping a country's six
-- campaigns of values (~950,000) at every read took 1.3 s on PostgreSQL and 2.3 s embedded
-- (bench/README.md, "Data quality"), yet that history changes only when a value of an earlier
-- campaign does, or the campaigns' dates, or an indicator's format: the summary is made at the first
-- read after such a change, kept, and read as one row per value. Written to run twice, as every
-- migration from 010 on.

-- A campaign's summary over `history` values is made and current: its rows in outlier_history are
-- complete. A change that makes it stale deletes this row only (the triggers below: cheap in a
-- write); the next read replaces the rows.
CREATE TABLE IF NOT EXISTS outlier_history_run (
  campaign_id integer NOT NULL REFERENCES campaign ON DELETE CASCADE,
  history integer NOT NULL,
  made_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (campaign_id, history)
);

-- The summary: for each location and indicator with values before the campaign, those values' count,
-- mean and sample standard deviation. Read only where its run exists. No foreign key: a summary's
-- 190,000 rows each checked against campaign took 0.9 s of the 3.6 s its making took; the rows of a
-- deleted campaign go with it (outlier_history_all_stale).
CREATE TABLE IF NOT EXISTS outlier_history (
  campaign_id integer NOT NULL,
  history integer NOT NULL,
  location_id integer NOT NULL,
  indicator_id integer NOT NULL,
  n integer NOT NULL,
  mean double precision NULL,
  sd double precision NULL,
  PRIMARY KEY (campaign_id, history, location_id, indicator_id)
);

-- The lock a summary is made under, and that a write of earlier values takes (shared) before it
-- marks summaries stale: a summary is never made from a snapshot that misses a write which then
-- finds nothing to mark (lib/engine/outliers.ts).
CREATE OR REPLACE FUNCTION outlier_history_lock_key() RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT 7368032110001::bigint
$$;

-- Values of campaigns starting on `changed_start` or later changed: the summaries of the campaigns
-- starting after it are stale. A write to the latest campaign marks nothing and takes no lock.
CREATE OR REPLACE FUNCTION outlier_history_values_changed(changed_start date) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF changed_start IS NULL OR NOT EXISTS (SELECT 1 FROM campaign WHERE start_date > changed_start) THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(outlier_history_lock_key());
  DELETE FROM outlier_history_run r USING campaign c WHERE c.id = r.campaign_id AND c.start_date > changed_start;
END;
$$;

CREATE OR REPLACE FUNCTION outlier_history_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM outlier_history_values_changed((SELECT min(c.start_date) FROM new_rows n JOIN campaign c ON c.id = n.campaign_id));
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION outlier_history_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM outlier_history_values_changed((SELECT min(c.start_date) FROM (SELECT campaign_id FROM new_rows UNION ALL SELECT campaign_id FROM old_rows) n
    JOIN campaign c ON c.id = n.campaign_id));
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION outlier_history_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM outlier_history_values_changed((SELECT min(c.start_date) FROM old_rows n JOIN campaign c ON c.id = n.campaign_id));
  RETURN NULL;
END;
$$;

-- Campaigns added, removed or moved in time, an indicator's format changed, every value removed:
-- every summary is stale, and a removed campaign's rows go.
CREATE OR REPLACE FUNCTION outlier_history_all_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(outlier_history_lock_key());
  DELETE FROM outlier_history_run;
  IF TG_TABLE_NAME = 'campaign' AND TG_OP = 'DELETE' THEN
    DELETE FROM outlier_history h WHERE NOT EXISTS (SELECT 1 FROM campaign c WHERE c.id = h.campaign_id);
  END IF;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE TRIGGER outlier_history_on_insert AFTER INSERT ON datapoint
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_inserted();
CREATE OR REPLACE TRIGGER outlier_history_on_update AFTER UPDATE ON datapoint
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_updated();
CREATE OR REPLACE TRIGGER outlier_history_on_delete AFTER DELETE ON datapoint
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_removed();
CREATE OR REPLACE TRIGGER outlier_history_on_truncate AFTER TRUNCATE ON datapoint
  FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_all_stale();
CREATE OR REPLACE TRIGGER outlier_history_campaigns_changed AFTER INSERT OR DELETE OR UPDATE OF start_date ON campaign
  FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_all_stale();
CREATE OR REPLACE TRIGGER outlier_history_formats_changed AFTER UPDATE OF data_format ON indicator
  FOR EACH STATEMENT EXECUTE FUNCTION outlier_history_all_stale();
