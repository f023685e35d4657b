-- A campaign's raw rows of agg_datapoint found by its own index: a correction asks how many there are
-- (lib/engine/recompute-changed.ts) and, with no index starting with campaign_id, that scanned the
-- whole table, every campaign ever stored (330 ms at 5 M rows, 3.5 ms with this index).
CREATE INDEX IF NOT EXISTS agg_datapoint_campaign_raw ON agg_datapoint (campaign_id) WHERE is_raw;
