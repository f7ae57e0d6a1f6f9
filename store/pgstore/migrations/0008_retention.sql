-- Retention: a sweep removes finished jobs, ended sessions and expired
-- single-use tokens, authorization requests, refresh tokens and grants
-- in batches, each found through an index by the time it became
-- removable, so that a batch costs what it removes. The expressions are
-- the ones the sweep's queries use: store.Delivery.FinishedAt and
-- store.Session.EndedAt (the zero time is 0001-01-01 UTC).
CREATE INDEX deliveries_finished ON deliveries (workspace, kind, status,
    (CASE WHEN last_attempt_at = '0001-01-01 00:00:00+00' THEN created_at ELSE last_attempt_at END))
    WHERE status <> 'pending';
CREATE INDEX sessions_ended ON sessions (workspace,
    (CASE WHEN revoked_at <> '0001-01-01 00:00:00+00' AND revoked_at < expires_at THEN revoked_at ELSE expires_at END));
CREATE INDEX verification_tokens_expiry ON verification_tokens (workspace, expires_at);
CREATE INDEX auth_requests_expiry ON auth_requests (workspace, expires_at);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (workspace, expires_at);
CREATE INDEX grants_expiry ON grants (workspace, expires_at);
