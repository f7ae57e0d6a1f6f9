package pgstore

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// Claim mappers.

// ClaimMappers implements store.Tx. Attribute keys are bytea, so they sort
// byte by byte, as Go strings do.
func (t *tx) ClaimMappers(slug string) ([]store.ClaimMapper, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, claimMappersSQL, []any{slug}, scanClaimMapper)
}

// claimMappersSQL reads the claim mappers of workspace $1 in ascending
// attribute_key order (byte order, Go's string order), for
// scanClaimMapper.
const claimMappersSQL = `SELECT attribute_key, claim_name, include_in_access, include_in_id, version
	FROM claim_mappers WHERE workspace = $1 ORDER BY attribute_key`

// scanClaimMapper reads a row of claimMappersSQL.
func scanClaimMapper(r pgx.Row) (store.ClaimMapper, error) {
	var m store.ClaimMapper
	var key, claim []byte
	err := r.Scan(&key, &claim, &m.IncludeInAccess, &m.IncludeInID, &m.Version)
	m.AttributeKey, m.ClaimName = string(key), string(claim)
	return m, err
}

// PutClaimMapper implements store.Tx.
func (t *tx) PutClaimMapper(slug string, m store.ClaimMapper) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec(`INSERT INTO claim_mappers (workspace, attribute_key, claim_name, include_in_access, include_in_id, version)
		SELECT slug, $2::bytea, $3::bytea, $4::boolean, $5::boolean, $6::bigint FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, attribute_key) DO UPDATE SET claim_name = excluded.claim_name,
			include_in_access = excluded.include_in_access, include_in_id = excluded.include_in_id,
			version = excluded.version`,
		slug, []byte(m.AttributeKey), []byte(m.ClaimName), m.IncludeInAccess, m.IncludeInID, m.Version)
	return t.written(tag, err, slug)
}

// DeleteClaimMapper implements store.Tx.
func (t *tx) DeleteClaimMapper(slug, attributeKey string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM claim_mappers WHERE workspace = $1 AND attribute_key = $2", slug, []byte(attributeKey))
	return deleted(tag, err, "claim mapper %q", attributeKey)
}

// written returns the error of an INSERT ... SELECT ... FROM workspaces
// WHERE slug = $1: err, or store.ErrNotFound when it wrote no row because
// the workspace does not exist.
func (t *tx) written(tag interface{ RowsAffected() int64 }, err error, slug string) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound("workspace %q", slug)
	}
	t.knowSpace(slug)
	return nil
}

// deleted returns the error of a DELETE of one record: err, or
// store.ErrNotFound wrapped with the record, which format and args name,
// when it deleted no row.
func deleted(tag interface{ RowsAffected() int64 }, err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return notFound(format, args...)
	}
	return nil
}

// Webhooks.

// webhookColumns are the columns scanWebhook reads, in its order.
const webhookColumns = "id, url, description, events, enabled, created_at, secret, failing_since, version"

// scanWebhook reads a row of webhookColumns.
func scanWebhook(r pgx.Row) (store.Webhook, error) {
	var w store.Webhook
	err := r.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.CreatedAt, &w.Secret, &w.FailingSince, &w.Version)
	return w, err
}

// PutWebhook implements store.Tx.
func (t *tx) PutWebhook(slug string, w store.Webhook) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("url", w.URL, "description", w.Description, "secret", w.Secret); err != nil {
		return err
	}
	if err := checkTexts("event", w.Events); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO webhooks (workspace, id, url, description, events, enabled, created_at, secret, failing_since, version)
		SELECT slug, $2::bigint, $3::text, $4::text, $5::text[], $6::boolean, $7::timestamptz, $8::text, $9::timestamptz, $10::bigint
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET url = excluded.url, description = excluded.description,
			events = excluded.events, enabled = excluded.enabled, created_at = excluded.created_at,
			secret = excluded.secret, failing_since = excluded.failing_since, version = excluded.version`,
		slug, w.ID, w.URL, w.Description, texts(w.Events), w.Enabled, ts(w.CreatedAt), w.Secret, ts(w.FailingSince), w.Version)
	return t.written(tag, err, slug)
}

// Webhook implements store.Tx.
func (t *tx) Webhook(slug string, id int64) (store.Webhook, error) {
	if !storable(slug) {
		return store.Webhook{}, notFound("workspace %q", slug)
	}
	return getRow(t, slug, t.row("SELECT "+webhookColumns+" FROM webhooks WHERE workspace = $1 AND id = $2", slug, id),
		scanWebhook, "webhook endpoint %d", id)
}

// Webhooks implements store.Tx: the page and the total in one round trip.
func (t *tx) Webhooks(slug string, offset, limit int) ([]store.Webhook, int, error) {
	if !storable(slug) {
		return nil, 0, notFound("workspace %q", slug)
	}
	offset, limit = max(offset, 0), max(limit, 0)
	var total int
	var hooks []store.Webhook
	if limit > 0 {
		var err error
		hooks, err = collect(t, `SELECT `+webhookColumns+`, count(*) OVER ()
			FROM webhooks WHERE workspace = $1 ORDER BY id OFFSET $2 LIMIT $3`,
			[]any{slug, offset, limit}, func(r pgx.Rows) (store.Webhook, error) {
				var w store.Webhook
				err := r.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.CreatedAt, &w.Secret,
					&w.FailingSince, &w.Version, &total)
				return w, err
			})
		if err != nil {
			return nil, 0, err
		}
	}
	if len(hooks) == 0 {
		// No page (limit 0, or past the end): count apart.
		if _, err := t.queryRow("SELECT count(*) FROM webhooks WHERE workspace = $1", []any{slug}, &total); err != nil {
			return nil, 0, err
		}
		if total == 0 {
			return nil, 0, t.emptyResult(slug)
		}
	}
	return hooks, total, nil
}

// DeleteWebhook implements store.Tx. The deliveries of the endpoint go
// with it (ON DELETE CASCADE), and with them their due index entries.
func (t *tx) DeleteWebhook(slug string, id int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM webhooks WHERE workspace = $1 AND id = $2", slug, id)
	return deleted(tag, err, "webhook endpoint %d", id)
}

// Sessions.

// errEmptySessionID is returned by PutSession for a session without an id,
// which the other stores cannot store either.
var errEmptySessionID = errors.New("pgstore: the session id is empty")

// sessionColumns are the columns scanSession reads, in its order.
const sessionColumns = "id, user_id, secret_hash, created_at, expires_at, last_seen_at, revoked_at, user_agent, address, amr"

// scanSession reads a row of sessionColumns.
func scanSession(r pgx.Row) (store.Session, error) {
	var s store.Session
	var id []byte
	err := r.Scan(&id, &s.UserID, &s.SecretHash, &s.CreatedAt, &s.ExpiresAt, &s.LastSeenAt, &s.RevokedAt,
		&s.UserAgent, &s.Address, &s.AMR)
	s.ID, s.AMR = string(id), noneAsNil(s.AMR)
	return s, err
}

// PutSession implements store.Tx. It refuses the empty id, as the other
// stores do. The user agent, address and sign-in methods are text: a
// value text cannot hold is refused, as elsewhere (see checkText).
func (t *tx) PutSession(slug string, s store.Session) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if s.ID == "" {
		return errEmptySessionID
	}
	if err := checkText("user agent", s.UserAgent, "address", s.Address); err != nil {
		return err
	}
	if err := checkTexts("authentication method", s.AMR); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO sessions (workspace, id, user_id, secret_hash, created_at, expires_at, last_seen_at, revoked_at,
			user_agent, address, amr)
		SELECT slug, $2::bytea, $3::bigint, $4::bytea, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::timestamptz,
			$9::text, $10::text, $11::text[]
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET user_id = excluded.user_id, secret_hash = excluded.secret_hash,
			created_at = excluded.created_at, expires_at = excluded.expires_at,
			last_seen_at = excluded.last_seen_at, revoked_at = excluded.revoked_at,
			user_agent = excluded.user_agent, address = excluded.address, amr = excluded.amr`,
		slug, []byte(s.ID), s.UserID, bin(s.SecretHash), ts(s.CreatedAt), ts(s.ExpiresAt), ts(s.LastSeenAt), ts(s.RevokedAt),
		s.UserAgent, s.Address, texts(s.AMR))
	return t.written(tag, err, slug)
}

// Session implements store.Tx.
func (t *tx) Session(slug, id string) (store.Session, error) {
	if !storable(slug) {
		return store.Session{}, notFound("workspace %q", slug)
	}
	return getRow(t, slug, t.row("SELECT "+sessionColumns+" FROM sessions WHERE workspace = $1 AND id = $2", slug, []byte(id)),
		scanSession, "session %q", id)
}

// UserSessions implements store.Tx.
func (t *tx) UserSessions(slug string, userID int64) ([]store.Session, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+sessionColumns+" FROM sessions WHERE workspace = $1 AND user_id = $2 ORDER BY created_at, id",
		[]any{slug, userID}, scanSession)
}

// API keys.

// apiKeyColumns are the columns scanAPIKey reads, in its order.
const apiKeyColumns = "id, workspace, name, scopes, secret_hash, created_at"

// scanAPIKey reads a row of apiKeyColumns.
func scanAPIKey(r pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	err := r.Scan(&k.ID, &k.Workspace, &k.Name, &k.Scopes, &k.SecretHash, &k.CreatedAt)
	return k, err
}

// PutAPIKey implements store.Tx.
func (t *tx) PutAPIKey(k store.APIKey) error {
	if !storable(k.Workspace) {
		return notFound("workspace %q", k.Workspace)
	}
	if err := checkText("API key id", k.ID, "API key name", k.Name); err != nil {
		return err
	}
	if err := checkTexts("scope", k.Scopes); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO api_keys (id, workspace, name, scopes, secret_hash, created_at)
		SELECT $1::text, slug, $3::text, $4::text[], $5::bytea, $6::timestamptz FROM workspaces WHERE slug = $2
		ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace, name = excluded.name,
			scopes = excluded.scopes, secret_hash = excluded.secret_hash, created_at = excluded.created_at`,
		k.ID, k.Workspace, k.Name, texts(k.Scopes), bin(k.SecretHash), ts(k.CreatedAt))
	return t.written(tag, err, k.Workspace)
}

// APIKey implements store.Tx.
func (t *tx) APIKey(id string) (store.APIKey, error) {
	if !storable(id) {
		return store.APIKey{}, notFound("API key %q", id)
	}
	k, err := scanAPIKey(t.row("SELECT "+apiKeyColumns+" FROM api_keys WHERE id = $1", id))
	switch {
	case err == nil:
		return k, nil
	case errors.Is(err, pgx.ErrNoRows):
		return store.APIKey{}, notFound("API key %q", id)
	default:
		return store.APIKey{}, t.fail(err)
	}
}

// APIKeys implements store.Tx.
func (t *tx) APIKeys(slug string) ([]store.APIKey, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+apiKeyColumns+" FROM api_keys WHERE workspace = $1 ORDER BY id", []any{slug}, scanAPIKey)
}

// DeleteAPIKey implements store.Tx.
func (t *tx) DeleteAPIKey(id string) error {
	if !storable(id) {
		return notFound("API key %q", id)
	}
	tag, err := t.exec("DELETE FROM api_keys WHERE id = $1", id)
	return deleted(tag, err, "API key %q", id)
}

// OAuth clients.

// clientColumns are the columns scanClient reads, in its order.
const clientColumns = "id, name, public, redirect_uris, post_logout_redirect_uris, grant_types, claims, secret_hash, created_at"

// scanClient reads a row of clientColumns.
func scanClient(r pgx.Row) (store.OAuthClient, error) {
	var c store.OAuthClient
	err := r.Scan(&c.ID, &c.Name, &c.Public, &c.RedirectURIs, &c.PostLogoutRedirectURIs, &c.GrantTypes, &c.Claims,
		&c.SecretHash, &c.CreatedAt)
	c.Claims = noneAsNil(c.Claims)
	return c, err
}

// PutOAuthClient implements store.Tx.
func (t *tx) PutOAuthClient(slug string, c store.OAuthClient) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("OAuth client id", c.ID, "OAuth client name", c.Name); err != nil {
		return err
	}
	for _, list := range [][]string{c.RedirectURIs, c.PostLogoutRedirectURIs, c.GrantTypes, c.Claims} {
		if err := checkTexts("OAuth client value", list); err != nil {
			return err
		}
	}
	tag, err := t.exec(`INSERT INTO oauth_clients (workspace, id, name, public, redirect_uris, post_logout_redirect_uris,
			grant_types, claims, secret_hash, created_at)
		SELECT slug, $2::text, $3::text, $4::boolean, $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea, $10::timestamptz
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET name = excluded.name, public = excluded.public,
			redirect_uris = excluded.redirect_uris, post_logout_redirect_uris = excluded.post_logout_redirect_uris,
			grant_types = excluded.grant_types, claims = excluded.claims, secret_hash = excluded.secret_hash,
			created_at = excluded.created_at`,
		slug, c.ID, c.Name, c.Public, texts(c.RedirectURIs), texts(c.PostLogoutRedirectURIs), texts(c.GrantTypes),
		texts(c.Claims), bin(c.SecretHash), ts(c.CreatedAt))
	return t.written(tag, err, slug)
}

// OAuthClient implements store.Tx.
func (t *tx) OAuthClient(slug, id string) (store.OAuthClient, error) {
	if !storable(slug) {
		return store.OAuthClient{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.OAuthClient{}, t.missing(slug, "OAuth client %q", id)
	}
	return getRow(t, slug, t.row("SELECT "+clientColumns+" FROM oauth_clients WHERE workspace = $1 AND id = $2", slug, id),
		scanClient, "OAuth client %q", id)
}

// OAuthClients implements store.Tx. Ids are text COLLATE "C", so they
// sort byte by byte, as Go strings do.
func (t *tx) OAuthClients(slug string) ([]store.OAuthClient, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+clientColumns+" FROM oauth_clients WHERE workspace = $1 ORDER BY id", []any{slug}, scanClient)
}

// DeleteOAuthClient implements store.Tx.
func (t *tx) DeleteOAuthClient(slug, id string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if !storable(id) {
		return notFound("OAuth client %q", id)
	}
	tag, err := t.exec("DELETE FROM oauth_clients WHERE workspace = $1 AND id = $2", slug, id)
	return deleted(tag, err, "OAuth client %q", id)
}

// Verification tokens.

// errEmptyTokenID is returned by PutVerificationToken for a token without
// an id, which the other stores cannot store either.
var errEmptyTokenID = errors.New("pgstore: the verification token id is empty")

// PutVerificationToken implements store.Tx. It refuses the empty id, as
// the other stores do.
func (t *tx) PutVerificationToken(slug string, v store.VerificationToken) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if v.ID == "" {
		return errEmptyTokenID
	}
	if err := checkText("verification token id", v.ID, "email", v.Email, "purpose", string(v.Purpose)); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO verification_tokens (workspace, id, user_id, email, secret_hash, created_at, expires_at,
			used_at, purpose)
		SELECT slug, $2::text, $3::bigint, $4::text, $5::bytea, $6::timestamptz, $7::timestamptz, $8::timestamptz, $9::text
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET user_id = excluded.user_id, email = excluded.email,
			secret_hash = excluded.secret_hash, created_at = excluded.created_at,
			expires_at = excluded.expires_at, used_at = excluded.used_at, purpose = excluded.purpose`,
		slug, v.ID, v.UserID, v.Email, bin(v.SecretHash), ts(v.CreatedAt), ts(v.ExpiresAt), ts(v.UsedAt), string(v.Purpose))
	return t.written(tag, err, slug)
}

// VerificationToken implements store.Tx.
func (t *tx) VerificationToken(slug, id string) (store.VerificationToken, error) {
	if !storable(slug) {
		return store.VerificationToken{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.VerificationToken{}, t.missing(slug, "verification token %q", id)
	}
	v := store.VerificationToken{ID: id}
	found, err := t.queryRow(`SELECT user_id, email, secret_hash, created_at, expires_at, used_at, purpose
		FROM verification_tokens WHERE workspace = $1 AND id = $2`, []any{slug, id},
		&v.UserID, &v.Email, &v.SecretHash, &v.CreatedAt, &v.ExpiresAt, &v.UsedAt, &v.Purpose)
	if err != nil {
		return store.VerificationToken{}, err
	}
	if !found {
		return store.VerificationToken{}, t.missing(slug, "verification token %q", id)
	}
	return v, nil
}

// Idempotency records.

// PutIdempotency implements store.Tx.
func (t *tx) PutIdempotency(r store.IdempotencyRecord) error {
	if !storable(r.Workspace) {
		return notFound("workspace %q", r.Workspace)
	}
	tag, err := t.exec(`INSERT INTO idempotency (workspace, scope, key, fingerprint, created_at, expires_at, done, locked_until, result)
		SELECT slug, $2::bytea, $3::bytea, $4::bytea, $5::timestamptz, $6::timestamptz, $7::boolean, $8::timestamptz, $9::bytea
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, scope, key) DO UPDATE SET fingerprint = excluded.fingerprint,
			created_at = excluded.created_at, expires_at = excluded.expires_at, done = excluded.done,
			locked_until = excluded.locked_until, result = excluded.result`,
		r.Workspace, []byte(r.Scope), []byte(r.Key), bin(r.Fingerprint), ts(r.CreatedAt), ts(r.ExpiresAt),
		r.Done, ts(r.LockedUntil), bin(r.Result))
	return t.written(tag, err, r.Workspace)
}

// Idempotency implements store.Tx.
func (t *tx) Idempotency(slug, scope, key string) (store.IdempotencyRecord, error) {
	if !storable(slug) {
		return store.IdempotencyRecord{}, notFound("workspace %q", slug)
	}
	r := store.IdempotencyRecord{Workspace: slug, Scope: scope, Key: key}
	found, err := t.queryRow(`SELECT fingerprint, created_at, expires_at, done, locked_until, result
		FROM idempotency WHERE workspace = $1 AND scope = $2 AND key = $3`, []any{slug, []byte(scope), []byte(key)},
		&r.Fingerprint, &r.CreatedAt, &r.ExpiresAt, &r.Done, &r.LockedUntil, &r.Result)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	if !found {
		return store.IdempotencyRecord{}, t.missing(slug, "idempotency key %q in scope %q", key, scope)
	}
	return r, nil
}

// DeleteIdempotency implements store.Tx.
func (t *tx) DeleteIdempotency(slug, scope, key string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM idempotency WHERE workspace = $1 AND scope = $2 AND key = $3",
		slug, []byte(scope), []byte(key))
	return deleted(tag, err, "idempotency key %q in scope %q", key, scope)
}

// DeleteExpiredIdempotency implements store.Tx by walking the expiry
// index from its start.
func (t *tx) DeleteExpiredIdempotency(now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := t.exec(`DELETE FROM idempotency WHERE (workspace, scope, key) IN (
		SELECT workspace, scope, key FROM idempotency WHERE expires_at <= $1
		ORDER BY expires_at, workspace, scope, key LIMIT $2)`, ts(now), limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
