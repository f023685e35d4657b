-- Coverage of aggregates (docs/decisions.md, "Coverage of aggregated values"): an indicator may say
-- below which share of reporting children an aggregated value is flagged (0.8: fewer than 80 % of a
-- province's districts). Written to run twice, as every migration from 010 on.
ALTER TABLE indicator ADD COLUMN IF NOT EXISTS coverage_threshold double precision NULL
  CHECK (coverage_threshold >= 0 AND coverage_threshold <= 1);
