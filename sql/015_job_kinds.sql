-- The kinds of background job are declared in one place, resources/jobs.ts: each process that runs the
-- queue registers the kinds it declares here when it starts (lib/data/job-queue.ts), and a job must be
-- of a registered kind. The CHECK of a fixed list, which a new kind had to be added to by a migration
-- of its own, goes. Written to run twice, as every migration from 010 on.
CREATE TABLE IF NOT EXISTS job_kind (
  name text PRIMARY KEY
);
INSERT INTO job_kind (name) SELECT DISTINCT kind FROM job ON CONFLICT DO NOTHING;
INSERT INTO job_kind (name) VALUES ('transform_upload'), ('refresh_master'), ('agg_refresh'), ('revert_document')
  ON CONFLICT DO NOTHING;
ALTER TABLE job DROP CONSTRAINT IF EXISTS job_kind_check;
ALTER TABLE job DROP CONSTRAINT IF EXISTS job_kind_fkey;
ALTER TABLE job ADD CONSTRAINT job_kind_fkey FOREIGN KEY (kind) REFERENCES job_kind (name);
CREATE OR REPLACE TRIGGER job_kind_data_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON job_kind
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_data_changed();
