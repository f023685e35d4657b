-- Indexes for the datapoint reads, each justified by an EXPLAIN in
-- bench/README.md ("Datapoint reads").

-- campaign_datapoint reads one (campaign, indicator) slice and keeps the selected locations: an
-- index-only scan of this index feeds the hash semi-join with the location selection, without
-- visiting the heap. It replaces the (campaign_id, indicator_id) index, whose prefix it contains.
DROP INDEX datapoint_with_computed_campaign_indicator;
CREATE INDEX datapoint_with_computed_read ON datapoint_with_computed (campaign_id, indicator_id, location_id) INCLUDE (value, id);

-- date_datapoint reads only date rows: by indicator and location (the subtree of each target), within
-- a data_date window, summing value. Partial (campaign rows never match) and covering.
CREATE INDEX datapoint_date_read ON datapoint (indicator_id, location_id, data_date) INCLUDE (value, id) WHERE data_date IS NOT NULL;
