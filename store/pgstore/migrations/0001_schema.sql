-- The identity store schema. See the package documentation of pgstore for
-- the choice of types; in short:
--
--   * workspace slugs and the folded username, email and full name are
--     text COLLATE "C", so that they compare and sort byte by byte, as Go
--     strings do, and prefix searches are index range scans;
--   * strings the identity package accepts from callers without limiting
--     them to PostgreSQL text (attribute keys and values, claim names,
--     password hashes, session ids, idempotency scopes and keys, error
--     texts) are bytea, since text cannot hold NUL or invalid UTF-8;
--   * every time is timestamptz NOT NULL, to the microsecond, with Go's
--     zero time (the store package's "not set") kept as 0001-01-01 UTC;
--   * every row names its workspace, and foreign keys cascade.

-- The gate: every read-write transaction of the store locks this table,
-- in SHARE mode as a rule, in EXCLUSIVE mode when it must run alone (see
-- pgstore's package documentation). It holds no rows.
CREATE TABLE update_gate ();

CREATE TABLE workspaces (
    slug       text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL,
    settings   bytea NOT NULL
);

-- One row per workspace and id sequence: value is the last id handed out.
CREATE TABLE sequences (
    workspace text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    name      text COLLATE "C" NOT NULL,
    value     bigint NOT NULL,
    PRIMARY KEY (workspace, name)
);

CREATE TABLE users (
    workspace      text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id             bigint NOT NULL,
    username       text NOT NULL,
    email          text NOT NULL,
    full_name      text NOT NULL,
    -- store.Fold of username, email and full_name, computed in Go.
    username_fold  text COLLATE "C" NOT NULL,
    email_fold     text COLLATE "C" NOT NULL,
    full_name_fold text COLLATE "C" NOT NULL,
    email_verified boolean NOT NULL,
    enabled        boolean NOT NULL,
    mfa_enabled    boolean NOT NULL,
    password_hash  bytea NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    version        bigint NOT NULL,
    PRIMARY KEY (workspace, id)
);
-- Case-insensitive uniqueness, and prefix search on all three fields.
CREATE UNIQUE INDEX users_username_fold ON users (workspace, username_fold);
CREATE UNIQUE INDEX users_email_fold ON users (workspace, email_fold);
CREATE INDEX users_full_name_fold ON users (workspace, full_name_fold);

-- The number of users of each workspace, so that an unfiltered listing
-- does not count them one by one. The store adds the users a transaction
-- inserted when it commits (see pgstore's package documentation); a row
-- is absent until the first user.
CREATE TABLE user_counts (
    workspace text COLLATE "C" PRIMARY KEY REFERENCES workspaces ON DELETE CASCADE,
    n         bigint NOT NULL
);

CREATE TABLE user_roles (
    workspace text COLLATE "C" NOT NULL,
    user_id   bigint NOT NULL,
    role_id   bigint NOT NULL,
    PRIMARY KEY (workspace, user_id, role_id),
    FOREIGN KEY (workspace, user_id) REFERENCES users ON DELETE CASCADE
);

CREATE TABLE user_attributes (
    workspace text COLLATE "C" NOT NULL,
    user_id   bigint NOT NULL,
    key       bytea NOT NULL,
    value     bytea NOT NULL,
    PRIMARY KEY (workspace, user_id, key),
    FOREIGN KEY (workspace, user_id) REFERENCES users ON DELETE CASCADE
);

CREATE TABLE claim_mappers (
    workspace         text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    attribute_key     bytea NOT NULL,
    claim_name        bytea NOT NULL,
    include_in_access boolean NOT NULL,
    include_in_id     boolean NOT NULL,
    version           bigint NOT NULL,
    PRIMARY KEY (workspace, attribute_key)
);

CREATE TABLE webhooks (
    workspace     text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id            bigint NOT NULL,
    url           text NOT NULL,
    description   text NOT NULL,
    events        text[] NOT NULL,
    enabled       boolean NOT NULL,
    created_at    timestamptz NOT NULL,
    secret        text NOT NULL,
    failing_since timestamptz NOT NULL,
    version       bigint NOT NULL,
    PRIMARY KEY (workspace, id)
);

-- Webhook deliveries and mail jobs (endpoint_id NULL: store.NoEndpoint).
-- Deleting an endpoint deletes its deliveries.
CREATE TABLE deliveries (
    workspace       text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id              bigint NOT NULL,
    endpoint_id     bigint,
    event_id        text NOT NULL,
    event_type      text NOT NULL,
    payload         bytea NOT NULL,
    created_at      timestamptz NOT NULL,
    status          text NOT NULL,
    attempts        bigint NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz NOT NULL,
    lease_owner     text NOT NULL,
    last_attempt_at timestamptz NOT NULL,
    last_status     bigint NOT NULL,
    last_error      bytea NOT NULL,
    -- store.Delivery.DueAt: the later of next_attempt_at and lease_until.
    due_at          timestamptz NOT NULL,
    PRIMARY KEY (workspace, id),
    FOREIGN KEY (workspace, endpoint_id) REFERENCES webhooks ON DELETE CASCADE
);
CREATE INDEX deliveries_endpoint ON deliveries (workspace, endpoint_id, id);
-- The due index: pending deliveries of every workspace by due time.
CREATE INDEX deliveries_due ON deliveries (due_at, id, workspace) WHERE status = 'pending';

-- Sessions name a user id but, as the store contract allows any id, have
-- no foreign key to users.
CREATE TABLE sessions (
    workspace    text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id           bytea NOT NULL,
    user_id      bigint NOT NULL,
    secret_hash  bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    revoked_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace, id)
);
CREATE INDEX sessions_user ON sessions (workspace, user_id, created_at, id);

CREATE TABLE api_keys (
    id          text COLLATE "C" PRIMARY KEY,
    workspace   text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    name        text NOT NULL,
    scopes      text[] NOT NULL,
    secret_hash bytea NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX api_keys_workspace ON api_keys (workspace, id);

-- Verification tokens, like sessions, have no foreign key to users.
CREATE TABLE verification_tokens (
    workspace   text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id          text COLLATE "C" NOT NULL,
    user_id     bigint NOT NULL,
    email       text NOT NULL,
    secret_hash bytea NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz NOT NULL,
    PRIMARY KEY (workspace, id)
);

CREATE TABLE idempotency (
    workspace    text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    scope        bytea NOT NULL,
    key          bytea NOT NULL,
    fingerprint  bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    done         boolean NOT NULL,
    locked_until timestamptz NOT NULL,
    result       bytea NOT NULL,
    PRIMARY KEY (workspace, scope, key)
);
-- The sweep of DeleteExpiredIdempotency walks this index from its start.
CREATE INDEX idempotency_expiry ON idempotency (expires_at, workspace, scope, key);
