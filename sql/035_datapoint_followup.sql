-- A value marked for follow-up (DHIS2's follow-up of data values): someone reviewing a campaign's data
-- asks for a value to be checked, with a comment, and someone resolves it, with a comment; both are
-- kept, with who and when, as the value's follow-up history (resources/datapoint_followup.ts). The key
-- and location are the value's own, copied when it is marked, so a follow-up outlives a value deleted
-- since (no foreign key to datapoint, as in datapoint_history). One open follow-up per value.
-- Written to run twice, as every migration from 010 on.
CREATE TABLE IF NOT EXISTS datapoint_followup (
  id serial PRIMARY KEY,
  datapoint_id integer NOT NULL,
  unique_index varchar(255) COLLATE "C" NOT NULL,
  location_id integer NOT NULL,
  indicator_id integer NOT NULL,
  campaign_id integer NULL,
  data_date date NULL,
  value double precision NULL,
  comment varchar(2000) NOT NULL,
  created_by_id integer NULL REFERENCES auth_user ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  resolution_comment varchar(2000) NULL,
  resolved_by_id integer NULL REFERENCES auth_user ON DELETE SET NULL,
  resolved_at timestamptz NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS datapoint_followup_open ON datapoint_followup (unique_index) WHERE resolved_at IS NULL;
CREATE INDEX IF NOT EXISTS datapoint_followup_campaign ON datapoint_followup (campaign_id, location_id) WHERE resolved_at IS NULL;
CREATE INDEX IF NOT EXISTS datapoint_followup_value ON datapoint_followup (location_id, indicator_id);

CREATE OR REPLACE TRIGGER datapoint_followup_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON datapoint_followup
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
