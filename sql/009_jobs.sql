-- Background jobs (lib/data/job-queue.ts): one row per request of a pipeline step in its asynchronous
-- form. The queue itself (state, attempts, expiry, the worker's output) is pg-boss's, in its own schema;
-- the view job_state (made with the queue, since it names that schema) joins the two for the `job`
-- resource. Job rows change on every progress report: they notify nobody (the job resource's details are
-- never cached), so the detail caches do not churn while a job runs.
CREATE TABLE job (
  id serial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('transform_upload', 'refresh_master', 'agg_refresh')),
  params jsonb NOT NULL,
  -- What a job is one of at a time: `document:<id>` or `campaign:<id>`.
  subject text NOT NULL,
  queue_name text NOT NULL,
  queue_job_id uuid NOT NULL UNIQUE,
  progress jsonb,
  created_by_id integer REFERENCES auth_user (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX job_subject ON job (subject, id);
CREATE INDEX job_created_by ON job (created_by_id);
