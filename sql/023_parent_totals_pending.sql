-- A parent's int total is the sum of its children's final values (docs/decisions.md, "A parent's
-- total"). Campaigns recomputed before this rule hold parent totals by the old one until a full
-- recompute: they are listed here, recomputed whole by the server at its next start
-- (lib/engine/pending-recomputes.ts), and any recompute of one before then is a full one. Only where
-- some int indicator is calculated can the rules differ.
CREATE TABLE IF NOT EXISTS campaign_recompute_pending (
  campaign_id integer PRIMARY KEY REFERENCES campaign ON DELETE CASCADE
);

INSERT INTO campaign_recompute_pending (campaign_id)
SELECT c.id FROM campaign c
WHERE EXISTS (SELECT 1 FROM datapoint_with_computed w WHERE w.campaign_id = c.id)
  AND EXISTS (SELECT 1 FROM calculated_indicator_component k JOIN indicator i ON i.id = k.indicator_id WHERE i.data_format = 'int')
ON CONFLICT DO NOTHING;

-- Like every table (sql/004): a change notifies the servers' caches.
CREATE OR REPLACE TRIGGER campaign_recompute_pending_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON campaign_recompute_pending
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
