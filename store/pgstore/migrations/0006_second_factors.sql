-- The second factors of users (TOTP), one row per user that has one, per
-- workspace. Like login_attempts, it names a user id without a foreign
-- key to users: the store contract lets it name any user id. secret is
-- opaque to the store (the identity package may seal it); recovery_codes
-- holds the hashes of the unused recovery codes, in the order written.
-- A confirmed_at not set is Go's zero time, 0001-01-01 UTC, as elsewhere.
CREATE TABLE second_factors (
    workspace      text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id        bigint NOT NULL,
    secret         bytea NOT NULL,
    confirmed      boolean NOT NULL,
    created_at     timestamptz NOT NULL,
    confirmed_at   timestamptz NOT NULL,
    last_step      bigint NOT NULL,
    recovery_codes bytea[] NOT NULL,
    PRIMARY KEY (workspace, user_id)
);

-- Single-use tokens have a purpose: '' (email verification, which every
-- token stored before purposes existed is), 'password_reset' or
-- 'second_factor'. The store keeps it as given.
ALTER TABLE verification_tokens ADD COLUMN purpose text NOT NULL DEFAULT '';
