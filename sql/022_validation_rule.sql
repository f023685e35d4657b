-- Validation rules (docs/decisions.md, "Validation rules"): a comparison of two indicators' final
-- values (datapoint_with_computed) at the same location and campaign, e.g. "Children missed <=
-- Children targeted". A violated `flag` rule is reported, a violated `block` rule refuses the write
-- that caused it. A rule goes with either of its indicators. Written to run twice, as every
-- migration from 010 on.
CREATE TABLE IF NOT EXISTS validation_rule (
  id serial PRIMARY KEY,
  name varchar(255) NOT NULL UNIQUE,
  left_indicator_id integer NOT NULL REFERENCES indicator ON DELETE CASCADE,
  operator varchar(2) NOT NULL CHECK (operator IN ('<=', '<', '=', '>=', '>', '!=')),
  right_indicator_id integer NOT NULL REFERENCES indicator ON DELETE CASCADE,
  action varchar(5) NOT NULL DEFAULT 'flag' CHECK (action IN ('flag', 'block')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (left_indicator_id <> right_indicator_id)
);
CREATE INDEX IF NOT EXISTS validation_rule_left_indicator ON validation_rule (left_indicator_id);
CREATE INDEX IF NOT EXISTS validation_rule_right_indicator ON validation_rule (right_indicator_id);

CREATE OR REPLACE TRIGGER validation_rule_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON validation_rule
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
