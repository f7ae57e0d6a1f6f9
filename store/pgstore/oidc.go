package pgstore

import (
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// The records of the OpenID Provider (migration 0004; migration 0012 gave
// requests and grants their sign-in methods, requests their ui_locales
// and refresh tokens their successor). Their ids, client ids and grant
// ids are text, like an OAuth client's id; a relying party's state and
// nonce, and session ids, are bytea. The front refuses an empty id, and a
// refresh token without a grant, before these methods run.

// Signing keys.

// signingKeyColumns are the columns scanSigningKey reads, in its order.
const signingKeyColumns = "id, algorithm, state, private_key, public_key, created_at, activated_at, retired_at, remove_at"

// scanSigningKey reads a row of signingKeyColumns.
func scanSigningKey(r pgx.Row) (store.SigningKey, error) {
	var k store.SigningKey
	err := r.Scan(&k.ID, &k.Algorithm, &k.State, &k.PrivateKey, &k.PublicKey, &k.CreatedAt, &k.ActivatedAt,
		&k.RetiredAt, &k.RemoveAt)
	return k, err
}

// PutSigningKey implements store.Tx.
func (t *tx) PutSigningKey(slug string, k store.SigningKey) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("signing key id", k.ID, "signing key algorithm", k.Algorithm, "signing key state", k.State); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO signing_keys (workspace, id, algorithm, state, private_key, public_key, created_at,
			activated_at, retired_at, remove_at)
		SELECT slug, $2::text, $3::text, $4::text, $5::bytea, $6::bytea, $7::timestamptz, $8::timestamptz,
			$9::timestamptz, $10::timestamptz
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET algorithm = excluded.algorithm, state = excluded.state,
			private_key = excluded.private_key, public_key = excluded.public_key, created_at = excluded.created_at,
			activated_at = excluded.activated_at, retired_at = excluded.retired_at, remove_at = excluded.remove_at`,
		slug, k.ID, k.Algorithm, k.State, bin(k.PrivateKey), bin(k.PublicKey), ts(k.CreatedAt), ts(k.ActivatedAt),
		ts(k.RetiredAt), ts(k.RemoveAt))
	return t.written(tag, err, slug)
}

// SigningKeys implements store.Tx. Ids are text COLLATE "C", so ties of
// created_at sort byte by byte, as Go strings do.
func (t *tx) SigningKeys(slug string) ([]store.SigningKey, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+signingKeyColumns+" FROM signing_keys WHERE workspace = $1 ORDER BY created_at, id",
		[]any{slug}, scanSigningKey)
}

// DeleteSigningKey implements store.Tx.
func (t *tx) DeleteSigningKey(slug, id string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if !storable(id) {
		return notFound("signing key %q", id)
	}
	tag, err := t.exec("DELETE FROM signing_keys WHERE workspace = $1 AND id = $2", slug, id)
	return deleted(tag, err, "signing key %q", id)
}

// Authorization requests.

// PutAuthRequest implements store.Tx.
func (t *tx) PutAuthRequest(slug string, r store.AuthRequest) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("authorization request id", r.ID, "client id", r.ClientID, "redirect URI", r.RedirectURI,
		"code challenge", r.CodeChallenge, "code challenge method", r.CodeChallengeMethod, "prompt", r.Prompt,
		"UI locales", r.UILocales, "grant id", r.GrantID); err != nil {
		return err
	}
	if err := checkTexts("scope", r.Scopes); err != nil {
		return err
	}
	if err := checkTexts("authentication method", r.AMR); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO auth_requests (workspace, id, client_id, redirect_uri, scopes, state, nonce,
			code_challenge, code_challenge_method, prompt, created_at, expires_at, user_id, session_id, auth_time,
			code_hash, used_at, grant_id, ui_locales, amr)
		SELECT slug, $2::text, $3::text, $4::text, $5::text[], $6::bytea, $7::bytea, $8::text, $9::text, $10::text,
			$11::timestamptz, $12::timestamptz, $13::bigint, $14::bytea, $15::timestamptz, $16::bytea,
			$17::timestamptz, $18::text, $19::text, $20::text[]
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET client_id = excluded.client_id,
			redirect_uri = excluded.redirect_uri, scopes = excluded.scopes, state = excluded.state,
			nonce = excluded.nonce, code_challenge = excluded.code_challenge,
			code_challenge_method = excluded.code_challenge_method, prompt = excluded.prompt,
			created_at = excluded.created_at, expires_at = excluded.expires_at, user_id = excluded.user_id,
			session_id = excluded.session_id, auth_time = excluded.auth_time, code_hash = excluded.code_hash,
			used_at = excluded.used_at, grant_id = excluded.grant_id, ui_locales = excluded.ui_locales,
			amr = excluded.amr`,
		slug, r.ID, r.ClientID, r.RedirectURI, texts(r.Scopes), []byte(r.State), []byte(r.Nonce),
		r.CodeChallenge, r.CodeChallengeMethod, r.Prompt, ts(r.CreatedAt), ts(r.ExpiresAt), r.UserID,
		[]byte(r.SessionID), ts(r.AuthTime), bin(r.CodeHash), ts(r.UsedAt), r.GrantID, r.UILocales, texts(r.AMR))
	return t.written(tag, err, slug)
}

// AuthRequest implements store.Tx.
func (t *tx) AuthRequest(slug, id string) (store.AuthRequest, error) {
	if !storable(slug) {
		return store.AuthRequest{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.AuthRequest{}, t.missing(slug, "authorization request %q", id)
	}
	r := store.AuthRequest{ID: id}
	var state, nonce, session []byte
	found, err := t.queryRow(`SELECT client_id, redirect_uri, scopes, state, nonce, code_challenge,
			code_challenge_method, prompt, created_at, expires_at, user_id, session_id, auth_time, code_hash,
			used_at, grant_id, ui_locales, amr
		FROM auth_requests WHERE workspace = $1 AND id = $2`, []any{slug, id},
		&r.ClientID, &r.RedirectURI, &r.Scopes, &state, &nonce, &r.CodeChallenge, &r.CodeChallengeMethod,
		&r.Prompt, &r.CreatedAt, &r.ExpiresAt, &r.UserID, &session, &r.AuthTime, &r.CodeHash, &r.UsedAt, &r.GrantID,
		&r.UILocales, &r.AMR)
	if err != nil {
		return store.AuthRequest{}, err
	}
	if !found {
		return store.AuthRequest{}, t.missing(slug, "authorization request %q", id)
	}
	r.State, r.Nonce, r.SessionID = string(state), string(nonce), string(session)
	r.AMR = noneAsNil(r.AMR)
	return r, nil
}

// Grants.

// grantColumns are the columns scanGrant reads, in its order.
const grantColumns = "id, client_id, user_id, session_id, scopes, auth_time, created_at, expires_at, revoked_at, revoke_reason, amr"

// scanGrant reads a row of grantColumns.
func scanGrant(r pgx.Row) (store.Grant, error) {
	var g store.Grant
	var session []byte
	err := r.Scan(&g.ID, &g.ClientID, &g.UserID, &session, &g.Scopes, &g.AuthTime, &g.CreatedAt, &g.ExpiresAt,
		&g.RevokedAt, &g.RevokeReason, &g.AMR)
	g.SessionID, g.AMR = string(session), noneAsNil(g.AMR)
	return g, err
}

// PutGrant implements store.Tx.
func (t *tx) PutGrant(slug string, g store.Grant) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("grant id", g.ID, "client id", g.ClientID, "revoke reason", g.RevokeReason); err != nil {
		return err
	}
	if err := checkTexts("scope", g.Scopes); err != nil {
		return err
	}
	if err := checkTexts("authentication method", g.AMR); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO grants (workspace, id, client_id, user_id, session_id, scopes, auth_time,
			created_at, expires_at, revoked_at, revoke_reason, amr)
		SELECT slug, $2::text, $3::text, $4::bigint, $5::bytea, $6::text[], $7::timestamptz, $8::timestamptz,
			$9::timestamptz, $10::timestamptz, $11::text, $12::text[]
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET client_id = excluded.client_id, user_id = excluded.user_id,
			session_id = excluded.session_id, scopes = excluded.scopes, auth_time = excluded.auth_time,
			created_at = excluded.created_at, expires_at = excluded.expires_at, revoked_at = excluded.revoked_at,
			revoke_reason = excluded.revoke_reason, amr = excluded.amr`,
		slug, g.ID, g.ClientID, g.UserID, []byte(g.SessionID), texts(g.Scopes), ts(g.AuthTime), ts(g.CreatedAt),
		ts(g.ExpiresAt), ts(g.RevokedAt), g.RevokeReason, texts(g.AMR))
	return t.written(tag, err, slug)
}

// Grant implements store.Tx.
func (t *tx) Grant(slug, id string) (store.Grant, error) {
	if !storable(slug) {
		return store.Grant{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.Grant{}, t.missing(slug, "grant %q", id)
	}
	return getRow(t, slug, t.row("SELECT "+grantColumns+" FROM grants WHERE workspace = $1 AND id = $2", slug, id),
		scanGrant, "grant %q", id)
}

// UserGrants implements store.Tx: a range scan of grants_user. User id 0
// names no user: its grants are a client's own, in no user's list.
func (t *tx) UserGrants(slug string, userID int64) ([]store.Grant, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	if userID == 0 {
		return nil, t.emptyResult(slug)
	}
	return listRows(t, slug, "SELECT "+grantColumns+" FROM grants WHERE workspace = $1 AND user_id = $2 ORDER BY created_at, id",
		[]any{slug, userID}, scanGrant)
}

// Refresh tokens.

// PutRefreshToken implements store.Tx.
func (t *tx) PutRefreshToken(slug string, r store.RefreshToken) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("refresh token id", r.ID, "grant id", r.GrantID, "successor id", r.SuccessorID); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO refresh_tokens (workspace, id, grant_id, secret_hash, created_at, expires_at, used_at,
			successor_id)
		SELECT slug, $2::text, $3::text, $4::bytea, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::text
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET grant_id = excluded.grant_id, secret_hash = excluded.secret_hash,
			created_at = excluded.created_at, expires_at = excluded.expires_at, used_at = excluded.used_at,
			successor_id = excluded.successor_id`,
		slug, r.ID, r.GrantID, bin(r.SecretHash), ts(r.CreatedAt), ts(r.ExpiresAt), ts(r.UsedAt), r.SuccessorID)
	return t.written(tag, err, slug)
}

// RefreshToken implements store.Tx.
func (t *tx) RefreshToken(slug, id string) (store.RefreshToken, error) {
	if !storable(slug) {
		return store.RefreshToken{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.RefreshToken{}, t.missing(slug, "refresh token %q", id)
	}
	r := store.RefreshToken{ID: id}
	found, err := t.queryRow(`SELECT grant_id, secret_hash, created_at, expires_at, used_at, successor_id
		FROM refresh_tokens WHERE workspace = $1 AND id = $2`, []any{slug, id},
		&r.GrantID, &r.SecretHash, &r.CreatedAt, &r.ExpiresAt, &r.UsedAt, &r.SuccessorID)
	if err != nil {
		return store.RefreshToken{}, err
	}
	if !found {
		return store.RefreshToken{}, t.missing(slug, "refresh token %q", id)
	}
	return r, nil
}
