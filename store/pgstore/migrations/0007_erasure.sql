-- Permanent deletion: DeleteUser finds every record of a user through an
-- index, never by scanning a workspace's rows, and DeleteWorkspace
-- deletes the workspace's row, from which every other row cascades.
--
-- Mail jobs name the user they are about (0 for none, as every job of
-- the previous schema, and every webhook job).
ALTER TABLE deliveries ADD COLUMN user_id bigint NOT NULL DEFAULT 0;
ALTER TABLE deliveries ALTER COLUMN user_id DROP DEFAULT;
CREATE INDEX deliveries_user ON deliveries (workspace, user_id) WHERE kind = 'mail' AND user_id <> 0;
-- The single-use tokens and the authorization requests of a user, and
-- the refresh tokens of a grant.
CREATE INDEX verification_tokens_user ON verification_tokens (workspace, user_id);
CREATE INDEX auth_requests_user ON auth_requests (workspace, user_id) WHERE user_id <> 0;
CREATE INDEX refresh_tokens_grant ON refresh_tokens (workspace, grant_id);
