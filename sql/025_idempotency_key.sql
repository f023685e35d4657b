-- Idempotency keys of data writes (docs/decisions.md, "Retried writes"): a client that sends a POST or
-- PATCH again with the same Idempotency-Key gets the first answer back and nothing is written twice.
-- A key is its user's own, kept until expires_at; the first answer is kept as it was sent (its status,
-- the headers that describe it and its JSON text, byte for byte). The fingerprint is sha256 of the
-- method, path and body, so the same key with another request is told apart (422).
CREATE TABLE IF NOT EXISTS idempotency_key (
  id serial PRIMARY KEY,
  user_id integer NOT NULL REFERENCES auth_user ON DELETE CASCADE,
  key text NOT NULL,
  fingerprint char(64) NOT NULL,
  status integer NOT NULL,
  headers jsonb NOT NULL,
  answer text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  UNIQUE (user_id, key)
);
-- The expired keys are deleted on a schedule (plugins/jobs.ts) by this index.
CREATE INDEX IF NOT EXISTS idempotency_key_expires ON idempotency_key (expires_at);
