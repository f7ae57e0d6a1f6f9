-- The lockout state of users, one row per user that has one, per
-- workspace. Like sessions, it names a user id without a foreign key to
-- users: the store contract lets it name any user id. pending holds the
-- times the reservations in flight lapse, in the order written. A lock
-- not set is Go's zero time, 0001-01-01 UTC, as elsewhere.
CREATE TABLE login_attempts (
    workspace    text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id      bigint NOT NULL,
    failures     bigint NOT NULL,
    pending      timestamptz[] NOT NULL,
    locked_until timestamptz NOT NULL,
    PRIMARY KEY (workspace, user_id)
);
