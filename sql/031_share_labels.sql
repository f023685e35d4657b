-- A shared link says who or what it is for, and how its address ends (docs/decisions.md, "Export,
-- shared links and filters"): two links made from one view read apart in their list, and the one to
-- revoke is found by its label or by the end of the address its holder has. Only the last 4 of the
-- token's 43 characters are kept: what remains unknown is still 234 random bits.
ALTER TABLE dashboard_share ADD COLUMN IF NOT EXISTS label varchar(100) NULL;
ALTER TABLE dashboard_share ADD COLUMN IF NOT EXISTS token_end varchar(4) NULL;
