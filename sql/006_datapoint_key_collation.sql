-- Cheaper writes into datapoint, the table every upload fills (a campaign file of 2,000,000 cells
-- upserts 2,000,000 rows; bench/README.md, "Ingestion").
--
-- unique_index is a synthetic ASCII key (`location_indicator_campaign` or `…_YYYY-MM-DD`), compared
-- for equality only; its order means nothing. Under the database's collation every comparison in its
-- unique index goes through the locale (strcoll; C.UTF-8 here, en_US and the like elsewhere); "C"
-- compares bytes. The synthesised keys (lib/ingest/refresh.ts) are written in "C" as well.
ALTER TABLE datapoint ALTER COLUMN unique_index TYPE varchar(255) COLLATE "C";

-- Campaign rows have no data_date and date rows no campaign: indexing the NULLs served no query
-- (every read of these columns compares them, which excludes NULL) and cost one index entry per row.
DROP INDEX datapoint_data_date;
CREATE INDEX datapoint_data_date ON datapoint (data_date) WHERE data_date IS NOT NULL;
DROP INDEX datapoint_campaign;
CREATE INDEX datapoint_campaign ON datapoint (campaign_id) WHERE campaign_id IS NOT NULL;
