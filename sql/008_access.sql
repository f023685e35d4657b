-- The authorization model (lib/engine/access.ts). Membership of the metadata editors' group is part of who a
-- key authenticates as: a change to group memberships, or to a group's name, notifies `rhizome_auth`
-- (sql/002) so every server drops its cached authentications at once.
CREATE TRIGGER auth_user_groups_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON auth_user_groups
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();
CREATE TRIGGER auth_group_auth_changed AFTER DELETE OR UPDATE OF name OR TRUNCATE ON auth_group
  FOR EACH STATEMENT EXECUTE FUNCTION rhizome_auth_changed();

-- A row whose location lies outside its uploader's responsibility is kept as a submission, never
-- written as a datapoint.
ALTER TABLE source_submission DROP CONSTRAINT source_submission_process_status_check;
ALTER TABLE source_submission ADD CONSTRAINT source_submission_process_status_check
  CHECK (process_status IN ('TO_PROCESS', 'PROCESSED', 'MISSING_LOCATION', 'MISSING_CAMPAIGN', 'MISSING_DATE', 'LOCATION_FORBIDDEN'));
