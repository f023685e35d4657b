-- The derived tables keyed by campaign first. A recompute reads and rewrites one campaign of
-- agg_datapoint and datapoint_with_computed; their unique keys began with the location, so a
-- campaign's ~300,000 keys sat on every leaf page of those indexes, and agg_datapoint had no index
-- that finds a campaign's rows at all: a campaign's agg_refresh read the whole table. Once the
-- database outgrew memory (30 M raw values), that refresh slowed with everything stored
-- (bench/README.md, "Scale"). The engine's every read and write names its campaign C, and
-- campaign_datapoint names its campaign set; the campaign list's has-data question probes each
-- campaign at the locations of a subtree, which (campaign, location) serves as well.
--
-- The same keys, campaign first: a campaign's rows are one range of each index. A correction's
-- recompute reads a campaign's rows at a few locations (campaign, then location); campaign_datapoint
-- reads a campaign's indicators over many locations through datapoint_with_computed_read (campaign,
-- then indicator), which stays.
-- Written to run twice (test/hardening.test.ts runs the migrations from 010 again).
ALTER TABLE agg_datapoint DROP CONSTRAINT IF EXISTS agg_datapoint_location_id_campaign_id_indicator_id_key;
ALTER TABLE agg_datapoint DROP CONSTRAINT IF EXISTS agg_datapoint_campaign_location_indicator_key;
ALTER TABLE agg_datapoint ADD CONSTRAINT agg_datapoint_campaign_location_indicator_key
  UNIQUE (campaign_id, location_id, indicator_id);

ALTER TABLE datapoint_with_computed DROP CONSTRAINT IF EXISTS datapoint_with_computed_location_id_campaign_id_indicator_i_key;
ALTER TABLE datapoint_with_computed DROP CONSTRAINT IF EXISTS datapoint_with_computed_campaign_location_indicator_key;
ALTER TABLE datapoint_with_computed ADD CONSTRAINT datapoint_with_computed_campaign_location_indicator_key
  UNIQUE (campaign_id, location_id, indicator_id);
