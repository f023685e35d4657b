-- Every change of a raw value, kept (docs/decisions.md, "Datapoint history"): written by the database in
-- the writing transaction, so a change by any path (the API, a job, the CLI, psql) is recorded, with
-- statement-level triggers over transition tables (one INSERT … SELECT per statement, however many rows
-- it wrote). A row says what changed (the key and the value before and after), whose value it is (the
-- document of the value written, or of the value removed), what it replaced (so an upload can be
-- reverted: lib/engine/revert.ts), and who made the change through what: the application says so in
-- transaction-local settings (lib/data/attribution.ts); a session that says nothing is `sql`.
-- The ids name no foreign keys: the history outlives the rows it names. Written to run twice.
CREATE TABLE IF NOT EXISTS datapoint_history (
  id bigserial PRIMARY KEY,
  change varchar(6) NOT NULL CHECK (change IN ('insert', 'update', 'delete')),
  datapoint_id integer NOT NULL,
  unique_index varchar(255) COLLATE "C" NOT NULL,
  location_id integer NOT NULL,
  indicator_id integer NOT NULL,
  campaign_id integer NULL,
  data_date date NULL,
  value_before double precision NULL,
  value_after double precision NULL,
  document_id integer NULL,
  source_submission_id integer NULL,
  source_submission_id_before integer NULL,
  precedence_at_before timestamptz NULL,
  via varchar(8) NOT NULL CHECK (via IN ('api', 'job', 'cli', 'demo', 'sql')),
  user_id integer NULL,
  job_id integer NULL,
  request_id varchar(255) NULL,
  reverted_document_id integer NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
-- A document's changes (the history of an upload, and what its revert reads). BRIN, not a B-tree: an
-- upload's rows are appended together, so block ranges find them, and the index costs a summary per
-- block range instead of an entry per value written; minmax-multi keeps a range useful when data
-- entries of another document fall between an upload's rows.
CREATE INDEX IF NOT EXISTS datapoint_history_document ON datapoint_history USING brin (document_id int4_minmax_multi_ops);
CREATE INDEX IF NOT EXISTS datapoint_history_reverted_document ON datapoint_history (reverted_document_id) WHERE reverted_document_id IS NOT NULL;

-- Who and through what, as the writing transaction said it (lib/data/attribution.ts).
CREATE OR REPLACE FUNCTION datapoint_history_context(OUT via text, OUT user_id integer, OUT job_id integer, OUT request_id text, OUT reverted_document_id integer)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('rhizome.via', true), ''), 'sql'),
    nullif(current_setting('rhizome.user_id', true), '')::integer,
    nullif(current_setting('rhizome.job_id', true), '')::integer,
    nullif(current_setting('rhizome.request_id', true), ''),
    nullif(current_setting('rhizome.reverted_document_id', true), '')::integer
$$;

CREATE OR REPLACE FUNCTION datapoint_history_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, data_date,
    value_after, document_id, source_submission_id, via, user_id, job_id, request_id, reverted_document_id)
  SELECT 'insert', n.id, n.unique_index, n.location_id, n.indicator_id, n.campaign_id, n.data_date,
    n.value, s.document_id, n.source_submission_id, c.via, c.user_id, c.job_id, c.request_id, c.reverted_document_id
  FROM new_rows n LEFT JOIN source_submission s ON s.id = n.source_submission_id CROSS JOIN datapoint_history_context() c;
  RETURN NULL;
END;
$$;

-- Only rows whose value or source changed: the upsert also rewrites precedence and created_at.
CREATE OR REPLACE FUNCTION datapoint_history_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, data_date,
    value_before, value_after, document_id, source_submission_id, source_submission_id_before, precedence_at_before,
    via, user_id, job_id, request_id, reverted_document_id)
  SELECT 'update', n.id, n.unique_index, n.location_id, n.indicator_id, n.campaign_id, n.data_date,
    o.value, n.value, s.document_id, n.source_submission_id, o.source_submission_id, o.precedence_at,
    c.via, c.user_id, c.job_id, c.request_id, c.reverted_document_id
  FROM old_rows o JOIN new_rows n ON n.id = o.id LEFT JOIN source_submission s ON s.id = n.source_submission_id
    CROSS JOIN datapoint_history_context() c
  WHERE o.value IS DISTINCT FROM n.value OR o.source_submission_id <> n.source_submission_id OR o.unique_index <> n.unique_index;
  RETURN NULL;
END;
$$;

-- Removed rows: a DELETE's transition table, or every row a TRUNCATE is about to remove (it fires no
-- delete trigger).
CREATE OR REPLACE FUNCTION datapoint_history_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, data_date,
      value_before, document_id, source_submission_id_before, precedence_at_before, via, user_id, job_id, request_id, reverted_document_id)
    SELECT ''delete'', o.id, o.unique_index, o.location_id, o.indicator_id, o.campaign_id, o.data_date,
      o.value, s.document_id, o.source_submission_id, o.precedence_at, c.via, c.user_id, c.job_id, c.request_id, c.reverted_document_id
    FROM %I o LEFT JOIN source_submission s ON s.id = o.source_submission_id CROSS JOIN datapoint_history_context() c',
    CASE WHEN TG_OP = 'TRUNCATE' THEN 'datapoint' ELSE 'old_rows' END);
  RETURN NULL;
END;
$$;

CREATE OR REPLACE TRIGGER datapoint_history_on_insert AFTER INSERT ON datapoint
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION datapoint_history_inserted();
CREATE OR REPLACE TRIGGER datapoint_history_on_update AFTER UPDATE ON datapoint
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION datapoint_history_updated();
CREATE OR REPLACE TRIGGER datapoint_history_on_delete AFTER DELETE ON datapoint
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION datapoint_history_removed();
CREATE OR REPLACE TRIGGER datapoint_history_on_truncate BEFORE TRUNCATE ON datapoint
  FOR EACH STATEMENT EXECUTE FUNCTION datapoint_history_removed();

-- Append-only: a change, once recorded, is never rewritten (an operator may still delete old history).
CREATE OR REPLACE FUNCTION datapoint_history_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'datapoint_history is append-only: a recorded change is never rewritten' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE OR REPLACE TRIGGER datapoint_history_append_only BEFORE UPDATE ON datapoint_history
  FOR EACH STATEMENT EXECUTE FUNCTION datapoint_history_refuse_update();

CREATE OR REPLACE TRIGGER datapoint_history_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON datapoint_history
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();

-- A revert is one more kind of background job.
ALTER TABLE job DROP CONSTRAINT IF EXISTS job_kind_check;
ALTER TABLE job ADD CONSTRAINT job_kind_check CHECK (kind IN ('transform_upload', 'refresh_master', 'agg_refresh', 'revert_document'));
