-- A location's expected range of an indicator's values (DHIS2's min-max values): a value entered or
-- uploaded outside it is an outlier on the Data quality page (resources/campaign_outlier.ts). Set by
-- hand, or generated from the location's history (resources/min_max_generate.ts, `generated` true),
-- which replaces generated ranges only and never one set by hand. One range per location and
-- indicator. Written to run twice, as every migration from 010 on.
CREATE TABLE IF NOT EXISTS min_max_range (
  id serial PRIMARY KEY,
  location_id integer NOT NULL REFERENCES location ON DELETE CASCADE,
  indicator_id integer NOT NULL REFERENCES indicator ON DELETE CASCADE,
  mn_val double precision NULL,
  mx_val double precision NULL,
  generated boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (location_id, indicator_id),
  CHECK (mn_val IS NULL OR mx_val IS NULL OR mn_val <= mx_val)
);
CREATE INDEX IF NOT EXISTS min_max_range_indicator ON min_max_range (indicator_id);

CREATE OR REPLACE TRIGGER min_max_range_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON min_max_range
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
