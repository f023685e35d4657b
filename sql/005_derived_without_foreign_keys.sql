-- The staged cells (doc_datapoint) and the engine's derived values (agg_datapoint,
-- datapoint_with_computed) are written in bulk: a campaign file of 2,000,000 cells stages 2,000,000
-- rows and its recompute writes about as many. PostgreSQL checks a foreign key row by row (a locking
-- lookup per row and key): on 40,000 staged cells the five keys of doc_datapoint took 1.17 s of a
-- 1.30 s insert (bench/README.md, "Ingestion"). These tables hold only ids that the same transaction
-- read from tables that keep their keys (datapoint, location_tree, calculated_indicator_component,
-- source_object_map), and they are rebuilt from them by refresh_master and agg_refresh. Deletes through
-- the API still refuse or cascade on them: the dispatcher counts and deletes dependents from the
-- references the schemas declare (lib/api/crud.ts), not from these constraints. docs/decisions.md has
-- the reasoning.
ALTER TABLE doc_datapoint
  DROP CONSTRAINT doc_datapoint_document_id_fkey,
  DROP CONSTRAINT doc_datapoint_source_submission_id_fkey,
  DROP CONSTRAINT doc_datapoint_indicator_id_fkey,
  DROP CONSTRAINT doc_datapoint_location_id_fkey,
  DROP CONSTRAINT doc_datapoint_campaign_id_fkey;
ALTER TABLE agg_datapoint
  DROP CONSTRAINT agg_datapoint_indicator_id_fkey,
  DROP CONSTRAINT agg_datapoint_location_id_fkey,
  DROP CONSTRAINT agg_datapoint_campaign_id_fkey;
ALTER TABLE datapoint_with_computed
  DROP CONSTRAINT datapoint_with_computed_indicator_id_fkey,
  DROP CONSTRAINT datapoint_with_computed_location_id_fkey,
  DROP CONSTRAINT datapoint_with_computed_campaign_id_fkey;
