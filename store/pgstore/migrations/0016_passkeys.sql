-- The passkeys of users (WebAuthn credentials), one row per credential,
-- keyed by (workspace, credential id); and the users' WebAuthn user
-- handles, one row per user that has one, unique per workspace. Like
-- second_factors, both name a user id without a foreign key to users (the
-- store contract lets them name any user id); DeleteUser deletes them by
-- user, and a workspace's go with it by the cascade. A last_used_at not
-- set is Go's zero time, 0001-01-01 UTC, as elsewhere.
CREATE TABLE passkeys (
    workspace       text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id              text COLLATE "C" NOT NULL,
    user_id         bigint NOT NULL,
    name            text NOT NULL,
    public_key      bytea NOT NULL,
    sign_count      bigint NOT NULL,
    aaguid          bytea NOT NULL,
    backup_eligible boolean NOT NULL,
    backup_state    boolean NOT NULL,
    created_at      timestamptz NOT NULL,
    last_used_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace, id)
);
CREATE INDEX passkeys_user ON passkeys (workspace, user_id, created_at, id);

CREATE TABLE passkey_handles (
    workspace  text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id    bigint NOT NULL,
    handle     bytea NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (workspace, user_id),
    UNIQUE (workspace, handle)
);
