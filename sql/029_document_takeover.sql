-- A re-upload writes only what it changes (docs/decisions.md, "A repeated value is held without a
-- write"). When a document's sync finds a key at the value it carries, under another document's older
-- source it may take over, it leaves the row as it is: the document holds the key by *claim*. A claim
-- is read from what is stored already, never written per key:
--   * `document_takeover` says which documents hold keys this way, and since when (their last sync);
--   * the document's winning staged cell (doc_datapoint, ingestion §5.4) says the value and submission
--     it holds;
--   * a datapoint row is claimed by such a document when the document is not older than the row's
--     precedence, its sync not older than the row's last write (`created_at`), and its cell holds the
--     row's value under another submission.
-- Several documents may claim one row: they took it over one after another, in the order of their
-- syncs, each not older than the one before (the chain below); the last is the row's holder. Whatever
-- depends on who holds a key reads the chain or makes it real first (`materialize_datapoint_claims`):
-- the sync's right to write, the keys a refresh deletes, a revert's plan, a document's deletion. The
-- history records each takeover of the chain before a claimed row's next change, as if each had been
-- written when it was made (the triggers below). Written to run twice.
CREATE TABLE IF NOT EXISTS document_takeover (
  document_id integer PRIMARY KEY REFERENCES source_doc ON DELETE CASCADE,
  synced_at timestamptz NOT NULL
);

CREATE OR REPLACE TRIGGER document_takeover_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON document_takeover
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();

-- A claim looks a document's cell up by its key: the document's cells by location and indicator.
CREATE INDEX IF NOT EXISTS doc_datapoint_document_key ON doc_datapoint (document_id, location_id, indicator_id);
DROP INDEX IF EXISTS doc_datapoint_document;

-- The claim chain of the datapoint rows in `relation` (any relation of datapoint's columns: the table,
-- a temporary table, a trigger's transition table), as a query's text: per claimed row, each takeover
-- in order (`step` of `steps`), the document, submission and precedence it holds the row with, and
-- what it took the row over from. A document's cell for a key is its winner under its conflict policy
-- (ingestion §5.4): the last cell, the first, or under `reject` the cells' one value when they agree.
CREATE OR REPLACE FUNCTION datapoint_claim_chain(relation text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($query$
    WITH claim AS (
      SELECT o.id AS datapoint_id, r.document_id, w.source_submission_id, n.created_at AS precedence_at, r.synced_at,
        o.source_submission_id AS stored_submission, o.precedence_at AS stored_precedence
      FROM %s o
      JOIN document_takeover r ON r.synced_at >= o.created_at
      JOIN source_doc n ON n.id = r.document_id AND n.created_at >= o.precedence_at
      CROSS JOIN LATERAL (
        SELECT (array_agg(d.source_submission_id ORDER BY CASE WHEN n.conflict = 'first' THEN d.id ELSE -d.id END))[1] AS source_submission_id,
          (array_agg(d.value ORDER BY CASE WHEN n.conflict = 'first' THEN d.id ELSE -d.id END))[1] AS value,
          min(d.value) = max(d.value) AS agree
        FROM doc_datapoint d
        WHERE d.document_id = r.document_id AND d.location_id = o.location_id AND d.indicator_id = o.indicator_id
          AND d.campaign_id IS NOT DISTINCT FROM o.campaign_id AND d.data_date IS NOT DISTINCT FROM o.data_date
      ) w
      WHERE w.value IS NOT DISTINCT FROM o.value AND w.source_submission_id <> o.source_submission_id
        AND (n.conflict <> 'reject' OR w.agree)
    ), ordered AS (
      SELECT c.*, max(c.precedence_at) OVER (PARTITION BY c.datapoint_id ORDER BY c.synced_at, c.document_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior
      FROM claim c
    ), chain AS (
      SELECT * FROM ordered WHERE prior IS NULL OR precedence_at >= prior
    )
    SELECT datapoint_id, document_id, source_submission_id, precedence_at,
      row_number() OVER w AS step, count(*) OVER (PARTITION BY datapoint_id) AS steps,
      coalesce(lag(source_submission_id) OVER w, stored_submission) AS submission_before,
      coalesce(lag(precedence_at) OVER w, stored_precedence) AS precedence_before
    FROM chain WINDOW w AS (PARTITION BY datapoint_id ORDER BY synced_at, document_id)
  $query$, relation)
$$;

-- The claims of the datapoint rows in `candidates` (a relation of datapoint's columns) made real: each
-- claimed row written with its holder's submission and precedence, its `created_at` (the time of its
-- value) kept; the history trigger records the takeovers before. Only rows whose chain holds a
-- takeover by `document`, when given, and only holders newer than `newer_than`, when given. Returns
-- how many rows were written.
CREATE OR REPLACE FUNCTION materialize_datapoint_claims(candidates regclass, document integer DEFAULT NULL, newer_than timestamptz DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  written integer;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM document_takeover) THEN
    RETURN 0;
  END IF;
  EXECUTE format('WITH chain AS (%s)
    UPDATE datapoint p SET source_submission_id = c.source_submission_id, precedence_at = c.precedence_at
    FROM chain c WHERE c.datapoint_id = p.id AND c.step = c.steps AND ($2 IS NULL OR c.precedence_at > $2)
      AND ($1 IS NULL OR EXISTS (SELECT 1 FROM chain x WHERE x.datapoint_id = c.datapoint_id AND x.document_id = $1))',
    datapoint_claim_chain(candidates::text))
    USING document, newer_than;
  GET DIAGNOSTICS written = ROW_COUNT;
  RETURN written;
END;
$$;

-- The history of an update: before a claimed row's change, each takeover of its chain (a row each, as
-- the sync that made it would have written), then the change itself, from the row's holder. A change
-- that makes the last takeover real (same value, the holder's submission) is that takeover's row.
CREATE OR REPLACE FUNCTION datapoint_history_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM document_takeover) THEN
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
  END IF;
  EXECUTE format($sql$
    WITH chain AS (%s),
    steps AS (
      -- The takeovers to record: every step, but a last one this statement makes real.
      SELECT ch.* FROM chain ch JOIN old_rows o ON o.id = ch.datapoint_id JOIN new_rows n ON n.id = o.id
      WHERE NOT (ch.step = ch.steps AND n.source_submission_id = ch.source_submission_id AND n.value IS NOT DISTINCT FROM o.value)
    ),
    holder AS (SELECT DISTINCT ON (datapoint_id) * FROM steps ORDER BY datapoint_id, step DESC),
    rows AS (
      SELECT 1 AS part, st.step, o.id, o.unique_index, o.location_id, o.indicator_id, o.campaign_id, o.data_date,
        o.value AS value_before, o.value AS value_after, st.source_submission_id, st.submission_before, st.precedence_before
      FROM steps st JOIN old_rows o ON o.id = st.datapoint_id
      UNION ALL
      SELECT 2, 0, n.id, n.unique_index, n.location_id, n.indicator_id, n.campaign_id, n.data_date,
        o.value, n.value, n.source_submission_id,
        coalesce(h.source_submission_id, o.source_submission_id), coalesce(h.precedence_at, o.precedence_at)
      FROM old_rows o JOIN new_rows n ON n.id = o.id LEFT JOIN holder h ON h.datapoint_id = o.id
      WHERE o.value IS DISTINCT FROM n.value OR coalesce(h.source_submission_id, o.source_submission_id) <> n.source_submission_id
        OR o.unique_index <> n.unique_index
    )
    INSERT INTO datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, data_date,
      value_before, value_after, document_id, source_submission_id, source_submission_id_before, precedence_at_before,
      via, user_id, job_id, request_id, reverted_document_id)
    SELECT 'update', r.id, r.unique_index, r.location_id, r.indicator_id, r.campaign_id, r.data_date,
      r.value_before, r.value_after, s.document_id, r.source_submission_id, r.submission_before, r.precedence_before,
      c.via, c.user_id, c.job_id, c.request_id, c.reverted_document_id
    FROM rows r LEFT JOIN source_submission s ON s.id = r.source_submission_id CROSS JOIN datapoint_history_context() c
    ORDER BY r.part, r.id, r.step
  $sql$, datapoint_claim_chain('old_rows'));
  RETURN NULL;
END;
$$;

-- The history of a removal: a claimed row's takeovers first, then its removal, from its holder.
CREATE OR REPLACE FUNCTION datapoint_history_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  removed text := CASE WHEN TG_OP = 'TRUNCATE' THEN 'datapoint' ELSE 'old_rows' END;
BEGIN
  EXECUTE format($sql$
    WITH chain AS (%s),
    holder AS (SELECT DISTINCT ON (datapoint_id) * FROM chain ORDER BY datapoint_id, step DESC),
    rows AS (
      SELECT 1 AS part, ch.step, o.id, o.unique_index, o.location_id, o.indicator_id, o.campaign_id, o.data_date,
        o.value AS value_before, o.value AS value_after, ch.source_submission_id, ch.submission_before, ch.precedence_before
      FROM chain ch JOIN %I o ON o.id = ch.datapoint_id
      UNION ALL
      SELECT 2, 0, o.id, o.unique_index, o.location_id, o.indicator_id, o.campaign_id, o.data_date,
        o.value, NULL, NULL, coalesce(h.source_submission_id, o.source_submission_id), coalesce(h.precedence_at, o.precedence_at)
      FROM %I o LEFT JOIN holder h ON h.datapoint_id = o.id
    )
    INSERT INTO datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, data_date,
      value_before, value_after, document_id, source_submission_id, source_submission_id_before, precedence_at_before,
      via, user_id, job_id, request_id, reverted_document_id)
    SELECT CASE r.part WHEN 1 THEN 'update' ELSE 'delete' END, r.id, r.unique_index, r.location_id, r.indicator_id,
      r.campaign_id, r.data_date, r.value_before, r.value_after,
      s.document_id, r.source_submission_id, r.submission_before, r.precedence_before,
      c.via, c.user_id, c.job_id, c.request_id, c.reverted_document_id
    FROM rows r LEFT JOIN source_submission s ON s.id = CASE r.part WHEN 1 THEN r.source_submission_id ELSE r.submission_before END
      CROSS JOIN datapoint_history_context() c
    ORDER BY r.part, r.id, r.step
  $sql$, CASE WHEN EXISTS (SELECT 1 FROM document_takeover) THEN datapoint_claim_chain(removed)
      ELSE 'SELECT NULL::integer AS datapoint_id, NULL::integer AS document_id, NULL::integer AS source_submission_id,
        NULL::timestamptz AS precedence_at, NULL::bigint AS step, NULL::bigint AS steps, NULL::integer AS submission_before,
        NULL::timestamptz AS precedence_before WHERE false' END, removed, removed);
  RETURN NULL;
END;
$$;

-- The datapoint rows document `document` holds (its results, a deletion's dependents): those it
-- wrote that no newer document holds by claim, and those it holds by claim.
CREATE OR REPLACE FUNCTION document_datapoints(document integer) RETURNS TABLE (datapoint_id integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM document_takeover) THEN
    RETURN QUERY SELECT p.id FROM datapoint p JOIN source_submission s ON s.id = p.source_submission_id WHERE s.document_id = document;
    RETURN;
  END IF;
  RETURN QUERY EXECUTE format($sql$
    WITH candidates AS MATERIALIZED (
      SELECT p.* FROM datapoint p JOIN source_submission s ON s.id = p.source_submission_id WHERE s.document_id = $1
      UNION
      SELECT p.* FROM datapoint p JOIN doc_datapoint d ON d.document_id = $1 AND d.location_id = p.location_id
        AND d.indicator_id = p.indicator_id AND d.campaign_id IS NOT DISTINCT FROM p.campaign_id
        AND d.data_date IS NOT DISTINCT FROM p.data_date
    ), chain AS (%s),
    holder AS (SELECT DISTINCT ON (datapoint_id) * FROM chain ORDER BY datapoint_id, step DESC)
    SELECT c.id FROM candidates c LEFT JOIN holder h ON h.datapoint_id = c.id
      JOIN source_submission s ON s.id = coalesce(h.source_submission_id, c.source_submission_id)
    WHERE s.document_id = $1
  $sql$, datapoint_claim_chain('candidates')) USING document;
END;
$$;
