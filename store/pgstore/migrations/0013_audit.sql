-- The audit trail: one row per record, keyed by its id within its
-- workspace. The identity package makes ids time-ordered, and they are
-- text COLLATE "C", so that ordering by id is byte order, Go's string
-- order, and ordering by time: no index by time is needed. See pgstore's
-- package documentation ("The audit trail") and audit.go.
--
-- The kinds, the action, the outcome and the reason are the identity
-- package's names, text; so are the address (as netip writes it) and the
-- user agent, which the identity package bounds as it does a session's.
-- The actor's and target's ids and names and the request id come from
-- callers (a login tried, a client_id sent, an X-Request-Id forwarded)
-- and are bytea, which keeps any string exactly, as are the changes: the
-- identity package's encoding, kept as given.
--
-- Rows go with their workspace, by the foreign key's cascade. A user's
-- deletion leaves them: the identity package rewrites those that name
-- the user.
CREATE TABLE audit_records (
    workspace      text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id             text COLLATE "C" NOT NULL,
    time           timestamptz NOT NULL,
    actor_kind     text COLLATE "C" NOT NULL,
    actor_id       bytea NOT NULL,
    actor_display  bytea NOT NULL,
    action         text COLLATE "C" NOT NULL,
    target_kind    text COLLATE "C" NOT NULL,
    target_id      bytea NOT NULL,
    target_display bytea NOT NULL,
    outcome        text COLLATE "C" NOT NULL,
    reason         text NOT NULL,
    address        text NOT NULL,
    user_agent     text NOT NULL,
    request_id     bytea NOT NULL,
    changes        bytea NOT NULL,
    PRIMARY KEY (workspace, id)
);

-- One index per filter of AuditRecords, each ending in the id, so that a
-- page of one actor's, one target's, one action's or one outcome's
-- records is a range of one index read in id order, in either direction,
-- that stops at the page's end. The primary key serves the unfiltered
-- page and DeleteAuditRecords, lowest ids first.
CREATE INDEX audit_records_actor ON audit_records (workspace, actor_kind, actor_id, id);
CREATE INDEX audit_records_target ON audit_records (workspace, target_kind, target_id, id);
CREATE INDEX audit_records_action ON audit_records (workspace, action, id);
CREATE INDEX audit_records_outcome ON audit_records (workspace, outcome, id);
