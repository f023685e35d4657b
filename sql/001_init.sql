-- Initial schema: every table of the specification (resource-api.md §14–§38, §45).
-- Foreign keys are RESTRICT unless the row is owned by its parent (api_key, location_tree, …):
-- the application cascades restricted deletes itself when the client asks for ?cascade=true.

CREATE TABLE auth_user (
  id serial PRIMARY KEY,
  username varchar(150) NOT NULL UNIQUE CHECK (username ~ '^[A-Za-z0-9_.@+-]+$'),
  email varchar(254) NOT NULL DEFAULT '',
  first_name varchar(150) NOT NULL DEFAULT '',
  last_name varchar(150) NOT NULL DEFAULT '',
  is_active boolean NOT NULL DEFAULT true,
  is_staff boolean NOT NULL DEFAULT false,
  is_superuser boolean NOT NULL DEFAULT false,
  date_joined timestamptz NOT NULL DEFAULT now(),
  last_login timestamptz NULL
);

CREATE TABLE api_key (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  key_hash char(64) NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NULL
);
CREATE INDEX api_key_user_id ON api_key (user_id);

CREATE TABLE auth_group (
  id serial PRIMARY KEY,
  name varchar(150) NOT NULL UNIQUE
);

CREATE TABLE auth_user_groups (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  group_id integer NOT NULL REFERENCES auth_group,
  UNIQUE (user_id, group_id)
);

CREATE TABLE campaign_type (
  id serial PRIMARY KEY,
  name varchar(55) NOT NULL
);

CREATE TABLE campaign (
  id serial PRIMARY KEY,
  name varchar(255) NOT NULL,
  campaign_type_id integer NOT NULL REFERENCES campaign_type,
  start_date date NOT NULL,
  end_date date NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (campaign_type_id, start_date),
  CONSTRAINT campaign_end_after_start CHECK (end_date >= start_date)
);

CREATE TABLE indicator (
  id serial PRIMARY KEY,
  short_name varchar(255) NOT NULL UNIQUE,
  name varchar(255) NOT NULL UNIQUE,
  description varchar(255) NOT NULL DEFAULT '',
  is_reported boolean NOT NULL DEFAULT true,
  data_format varchar(10) NOT NULL CHECK (data_format IN ('int', 'pct', 'bool', 'class', 'date', 'date_int')),
  resource_name varchar(10) NOT NULL DEFAULT 'campaign' CHECK (resource_name IN ('campaign', 'date')),
  good_bound double precision NULL,
  bad_bound double precision NULL,
  source_name varchar(55) NOT NULL DEFAULT '',
  bound_json jsonb NOT NULL DEFAULT '[]',
  tag_json jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE indicator_bound (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  mn_val double precision NULL,
  mx_val double precision NULL,
  bound_name varchar(255) NOT NULL,
  direction integer NOT NULL DEFAULT 1
);

CREATE TABLE indicator_tag (
  id serial PRIMARY KEY,
  tag_name varchar(255) NOT NULL,
  parent_tag_id integer NULL REFERENCES indicator_tag
);

CREATE TABLE indicator_to_tag (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  indicator_tag_id integer NOT NULL REFERENCES indicator_tag,
  UNIQUE (indicator_id, indicator_tag_id)
);

CREATE TABLE calculated_indicator_component (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  indicator_component_id integer NOT NULL REFERENCES indicator,
  calculation varchar(255) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (indicator_id, indicator_component_id, calculation),
  CHECK (indicator_component_id <> indicator_id)
);

CREATE TABLE custom_chart (
  id serial PRIMARY KEY,
  uuid varchar(255) NOT NULL UNIQUE,
  title varchar(255) NOT NULL UNIQUE,
  chart_json jsonb NOT NULL
);

CREATE TABLE custom_dashboard (
  id serial PRIMARY KEY,
  title varchar(255) NOT NULL UNIQUE,
  description varchar(1000) NOT NULL DEFAULT '',
  layout integer NULL DEFAULT 0,
  rows jsonb NULL
);

CREATE TABLE location_type (
  id serial PRIMARY KEY,
  name varchar(55) NOT NULL UNIQUE,
  admin_level integer NOT NULL UNIQUE
);

CREATE TABLE location (
  id serial PRIMARY KEY,
  name varchar(255) NOT NULL UNIQUE,
  location_code varchar(255) NOT NULL UNIQUE,
  location_type_id integer NOT NULL REFERENCES location_type,
  parent_location_id integer NULL REFERENCES location,
  latitude double precision NULL,
  longitude double precision NULL,
  lpd_status integer NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX location_parent ON location (parent_location_id);

-- Closure table: one row per (ancestor, descendant), lvl = distance. Owned by location.
CREATE TABLE location_tree (
  parent_location_id integer NOT NULL REFERENCES location ON DELETE CASCADE,
  location_id integer NOT NULL REFERENCES location ON DELETE CASCADE,
  lvl integer NOT NULL,
  PRIMARY KEY (parent_location_id, location_id)
);
CREATE INDEX location_tree_location ON location_tree (location_id);
CREATE INDEX location_tree_parent_lvl ON location_tree (parent_location_id, lvl);

CREATE TABLE location_permission (
  id serial PRIMARY KEY,
  user_id integer NOT NULL UNIQUE REFERENCES auth_user ON DELETE CASCADE,
  top_lvl_location_id integer NOT NULL REFERENCES location
);

CREATE TABLE location_polygon (
  id serial PRIMARY KEY,
  location_id integer NOT NULL UNIQUE REFERENCES location,
  geo_json jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE source_doc (
  id serial PRIMARY KEY,
  doc_title text NOT NULL UNIQUE,
  file_type varchar(10) NOT NULL CHECK (file_type IN ('campaign', 'date')),
  date_order varchar(3) NOT NULL DEFAULT 'MDY' CHECK (date_order IN ('MDY', 'DMY', 'YMD')),
  docfile varchar(255) NULL,
  file_header jsonb NULL,
  guid varchar(255) NOT NULL,
  created_by_id integer NULL REFERENCES auth_user ON DELETE SET NULL,
  ingest_stats jsonb NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE doc_detail_type (
  id serial PRIMARY KEY,
  name varchar(255) NOT NULL UNIQUE
);

CREATE TABLE doc_detail (
  id serial PRIMARY KEY,
  document_id integer NOT NULL REFERENCES source_doc,
  doc_detail_type_id integer NOT NULL REFERENCES doc_detail_type,
  doc_detail_value varchar(255) NOT NULL,
  UNIQUE (document_id, doc_detail_type_id)
);

CREATE TABLE source_object_map (
  id serial PRIMARY KEY,
  content_type varchar(20) NOT NULL CHECK (content_type IN ('indicator', 'location', 'campaign')),
  source_object_code varchar(255) NOT NULL,
  master_object_id integer NOT NULL DEFAULT -1,
  master_object_name varchar(255) NULL,
  mapped_by_id integer NULL REFERENCES auth_user ON DELETE SET NULL,
  UNIQUE (content_type, source_object_code)
);

CREATE TABLE doc_object_map (
  id serial PRIMARY KEY,
  document_id integer NOT NULL REFERENCES source_doc,
  source_object_map_id integer NOT NULL REFERENCES source_object_map,
  UNIQUE (document_id, source_object_map_id)
);

CREATE TABLE source_submission (
  id serial PRIMARY KEY,
  document_id integer NOT NULL REFERENCES source_doc,
  instance_guid varchar(255) NOT NULL,
  row_number integer NOT NULL,
  data_date date NULL,
  location_code varchar(1000) NOT NULL DEFAULT '',
  campaign_code varchar(1000) NOT NULL DEFAULT '',
  submission_json jsonb NOT NULL,
  process_status varchar(25) NOT NULL DEFAULT 'TO_PROCESS'
    CHECK (process_status IN ('TO_PROCESS', 'PROCESSED', 'MISSING_LOCATION', 'MISSING_CAMPAIGN', 'MISSING_DATE')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (document_id, instance_guid)
);
CREATE INDEX source_submission_document ON source_submission (document_id);

CREATE TABLE doc_datapoint (
  id serial PRIMARY KEY,
  document_id integer NOT NULL REFERENCES source_doc,
  source_submission_id integer NOT NULL REFERENCES source_submission,
  column_name varchar(255) NOT NULL,
  indicator_id integer NOT NULL REFERENCES indicator,
  location_id integer NOT NULL REFERENCES location,
  campaign_id integer NULL REFERENCES campaign,
  data_date date NULL,
  value double precision NOT NULL
);
CREATE INDEX doc_datapoint_document ON doc_datapoint (document_id);

CREATE TABLE datapoint (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  location_id integer NOT NULL REFERENCES location,
  campaign_id integer NULL REFERENCES campaign,
  data_date date NULL,
  value double precision NULL,
  source_submission_id integer NOT NULL REFERENCES source_submission,
  unique_index varchar(255) NOT NULL UNIQUE,
  precedence_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((campaign_id IS NULL) <> (data_date IS NULL))
);
CREATE INDEX datapoint_campaign ON datapoint (campaign_id);
CREATE INDEX datapoint_indicator_location ON datapoint (indicator_id, location_id);
CREATE INDEX datapoint_data_date ON datapoint (data_date);
CREATE INDEX datapoint_source_submission ON datapoint (source_submission_id);

CREATE TABLE agg_datapoint (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  location_id integer NOT NULL REFERENCES location,
  campaign_id integer NOT NULL REFERENCES campaign,
  value double precision NOT NULL,
  is_raw boolean NOT NULL,
  UNIQUE (location_id, campaign_id, indicator_id)
);

CREATE TABLE datapoint_with_computed (
  id serial PRIMARY KEY,
  indicator_id integer NOT NULL REFERENCES indicator,
  location_id integer NOT NULL REFERENCES location,
  campaign_id integer NOT NULL REFERENCES campaign,
  value double precision NOT NULL,
  UNIQUE (location_id, campaign_id, indicator_id)
);
CREATE INDEX datapoint_with_computed_campaign_indicator ON datapoint_with_computed (campaign_id, indicator_id);

-- Fixed seed rows (README §4).
INSERT INTO source_doc (doc_title, file_type, docfile, guid) VALUES ('Data Entry', 'campaign', NULL, 'data-entry');

INSERT INTO doc_detail_type (name) VALUES
  ('location_column'), ('uq_id_column'), ('submission_count'), ('submission_processed_count'),
  ('submission_to_process_count'), ('doc_datapoint_count'), ('datapoint_count'), ('agg_datapoint_count'),
  ('calc_datapoint_count'), ('date_column'), ('campaign_column');

INSERT INTO auth_group (name) VALUES
  ('data_entry'), ('explore_data'), ('source_data'), ('manage_system'), ('chart_builder'), ('chart_edit');
