-- Class indicators' labels (docs/decisions.md, "Class indicators"): each value of a `class` indicator
-- may have a label (LQAS: 1 pass, 0 fail, 2 not done), as the original's removed table had. Uploads
-- accept the label for the value, reads return it beside the value. The labels go with their
-- indicator. Written to run twice, as every migration from 010 on.
CREATE TABLE IF NOT EXISTS indicator_class_map (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator ON DELETE CASCADE,
  value double precision NOT NULL,
  label varchar(255) NOT NULL,
  UNIQUE (indicator_id, value),
  UNIQUE (indicator_id, label)
);
CREATE OR REPLACE TRIGGER indicator_class_map_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON indicator_class_map
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
