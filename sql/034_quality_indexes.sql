-- The Data quality reads of a campaign (bench/README.md, "Data quality"): campaign_outlier reads the
-- raw values of the campaign and of the last ones before it, grouped by location and indicator
-- (lib/engine/outliers.ts), and campaign_completeness the locations that reported in it. Both read
-- their values from this index alone (an index-only scan of each campaign's slice); a user responsible
-- for a province reads only its locations' entries (a probe per campaign and location). It replaces
-- the index on campaign_id, its prefix (every read by campaign, a recompute's included, uses this one).
-- Written to run twice, as every migration from 010 on.
CREATE INDEX IF NOT EXISTS datapoint_campaign_read ON datapoint (campaign_id, location_id, indicator_id) INCLUDE (value, id)
  WHERE campaign_id IS NOT NULL;
DROP INDEX IF EXISTS datapoint_campaign;
