-- Advisory locks belong to the whole database, not to a schema: the outlier summaries' lock is keyed
-- by the schema too, as the app's other keys are (lib/data/lock-keys.ts), so two deployments in two
-- schemas of one database never wait on each other's. STABLE: current_schema() is read at each call.
CREATE OR REPLACE FUNCTION outlier_history_lock_key() RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT (hashtext(coalesce(current_schema(), '') || '/outlier history')::bigint << 32)
$$;
