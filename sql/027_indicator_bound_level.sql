-- A range may hold at one location level only (a count bound meant for districts must not grade
-- every province): indicator_bound.location_type_id, null for a range of every level. At a value's
-- level, a range of that level is tried before the ranges of every level (lib/datapoints/status.ts).
-- A level with ranges is not deleted from under them (restrict, like its locations).
ALTER TABLE indicator_bound ADD COLUMN IF NOT EXISTS location_type_id integer NULL REFERENCES location_type (id);
CREATE INDEX IF NOT EXISTS indicator_bound_location_type_id ON indicator_bound (location_type_id);
