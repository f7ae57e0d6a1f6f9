-- OAuth clients of each workspace. The id is the client_id, unique within
-- its workspace; a public client has an empty secret_hash.
CREATE TABLE oauth_clients (
    workspace                 text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id                        text COLLATE "C" NOT NULL,
    name                      text NOT NULL,
    public                    boolean NOT NULL,
    redirect_uris             text[] NOT NULL,
    post_logout_redirect_uris text[] NOT NULL,
    grant_types               text[] NOT NULL,
    secret_hash               bytea NOT NULL,
    created_at                timestamptz NOT NULL,
    PRIMARY KEY (workspace, id)
);
