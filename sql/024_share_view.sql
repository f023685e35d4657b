-- A shared link keeps the view it was made from (docs/decisions.md, "Export, shared links and
-- filters"): the campaign, location and dates the dashboard showed, as the app's own view keys
-- ({campaign, location, start_date, end_date}); the link opens there. Null: the dashboard as saved.
ALTER TABLE dashboard_share ADD COLUMN IF NOT EXISTS view jsonb NULL;
