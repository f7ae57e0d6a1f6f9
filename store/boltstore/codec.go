package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/identitylib/identity/store"
)

// User record format, version 1:
//
//	byte     format version (userFormatV1)
//	byte     flags (userEmailVerified | userEnabled | userMFAEnabled)
//	string   Username       (each string: uvarint length, then bytes)
//	string   Email
//	string   FullName
//	string   PasswordHash
//	varint   CreatedAt      (unix microseconds, UTC)
//	varint   UpdatedAt
//	varint   Version        (absent in records written before it existed: 0)
//
// The id is the key and is not repeated. A later field is appended at the
// end and read only when present; a decoder ignores bytes after the fields
// it knows, so old code can read new records. A change that is not an
// append gets a new version byte, which old code refuses.
const userFormatV1 = 1

// Flags of the user record.
const (
	userEmailVerified = 1 << iota
	userEnabled
	userMFAEnabled
)

// errCorruptUser reports a user record that does not decode.
var errCorruptUser = errors.New("boltstore: corrupt user record")

// encodeUser returns the record of u.
func encodeUser(u store.User) []byte {
	size := 2 + len(u.Username) + len(u.Email) + len(u.FullName) + len(u.PasswordHash) +
		6*binary.MaxVarintLen64
	b := make([]byte, 0, size)
	b = append(b, userFormatV1, userFlags(u))
	for _, s := range [...]string{u.Username, u.Email, u.FullName, u.PasswordHash} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, toMicros(u.CreatedAt))
	b = binary.AppendVarint(b, toMicros(u.UpdatedAt))
	return binary.AppendVarint(b, u.Version)
}

// userFlags packs the booleans of u.
func userFlags(u store.User) byte {
	var f byte
	if u.EmailVerified {
		f |= userEmailVerified
	}
	if u.Enabled {
		f |= userEnabled
	}
	if u.MFAEnabled {
		f |= userMFAEnabled
	}
	return f
}

// decodeUser decodes the record v stored under the key k. It copies: v
// belongs to bbolt and is valid only during the transaction.
func decodeUser(k, v []byte) (store.User, error) {
	if len(v) < 2 {
		return store.User{}, errCorruptUser
	}
	if v[0] != userFormatV1 {
		return store.User{}, fmt.Errorf("boltstore: user record format %d is unknown", v[0])
	}
	d := userDecoder{b: v, s: string(v), pos: 2} // one copy serves every string
	u := store.User{
		ID:            decodeID(k),
		EmailVerified: v[1]&userEmailVerified != 0,
		Enabled:       v[1]&userEnabled != 0,
		MFAEnabled:    v[1]&userMFAEnabled != 0,
	}
	// Fields in record order.
	u.Username = d.string()
	u.Email = d.string()
	u.FullName = d.string()
	u.PasswordHash = d.string()
	u.CreatedAt = fromMicros(d.varint())
	u.UpdatedAt = fromMicros(d.varint())
	if d.pos < len(v) {
		u.Version = d.varint()
	}
	if d.bad {
		return store.User{}, fmt.Errorf("%w (id %d)", errCorruptUser, u.ID)
	}
	return u, nil
}

// userDecoder reads the fields of a user record in order. b and s hold the
// same bytes: lengths are read from b, strings sliced from s.
type userDecoder struct {
	b   []byte
	s   string
	pos int
	bad bool
}

// string reads a length-prefixed string.
func (d *userDecoder) string() string {
	if d.bad {
		return ""
	}
	n, w := binary.Uvarint(d.b[d.pos:])
	if w <= 0 || n > uint64(len(d.b)-d.pos-w) {
		d.bad = true
		return ""
	}
	start := d.pos + w
	d.pos = start + int(n)
	return d.s[start:d.pos]
}

// varint reads a signed varint.
func (d *userDecoder) varint() int64 {
	if d.bad {
		return 0
	}
	x, w := binary.Varint(d.b[d.pos:])
	if w <= 0 {
		d.bad = true
		return 0
	}
	d.pos += w
	return x
}

// toMicros returns t as unix microseconds; store times are kept to the
// microsecond.
func toMicros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros returns the UTC time of unix microseconds. The zero time.Time
// survives the round trip.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// optMicros returns t as unix microseconds, or nil for the zero time. It
// stores a time that is usually zero and that records written before the
// field existed lack: a missing field must read back as the zero time,
// not as 1970.
func optMicros(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	us := toMicros(t)
	return &us
}

// fromOptMicros is the inverse of optMicros.
func fromOptMicros(us *int64) time.Time {
	if us == nil {
		return time.Time{}
	}
	return fromMicros(*us)
}

// JSON records. The id, slug or key of a record is its bbolt key and is not
// repeated inside.

// workspaceRecord is the stored form of store.Workspace.
type workspaceRecord struct {
	CreatedAt int64  `json:"created_us"`
	Settings  []byte `json:"settings,omitempty"`
}

// webhookRecord is the stored form of store.Webhook.
type webhookRecord struct {
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events,omitempty"`
	Enabled     bool     `json:"enabled,omitempty"`
	CreatedAt   int64    `json:"created_us"`
	Secret      string   `json:"secret,omitempty"`
	// FailingSince is absent while the endpoint succeeds.
	FailingSince *int64 `json:"failing_since_us,omitempty"`
	Version      int64  `json:"version,omitempty"`
}

// deliveryRecord is the stored form of store.Delivery; the key holds both
// the endpoint id and the delivery id. The kind is where the record is
// stored: endpoint ids are positive, so a job under endpoint 0 is a mail
// job and any other a webhook job, as the previous release already stored
// them. A record written before Status existed has none, and is therefore
// not pending.
type deliveryRecord struct {
	EventID       string `json:"event_id"`
	EventType     string `json:"event_type"`
	Payload       []byte `json:"payload,omitempty"`
	CreatedAt     int64  `json:"created_us"`
	Status        string `json:"status,omitempty"`
	Attempts      int    `json:"attempts,omitempty"`
	NextAttemptAt int64  `json:"next_attempt_us"`
	LeaseUntil    *int64 `json:"lease_until_us,omitempty"`
	LeaseOwner    string `json:"lease_owner,omitempty"`
	LastAttemptAt *int64 `json:"last_attempt_us,omitempty"`
	LastStatus    int    `json:"last_status,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	// UserID is absent for none, as in every record written before mail
	// jobs named their user.
	UserID int64 `json:"user_id,omitempty"`
}

// sessionRecord is the stored form of store.Session; the session id is
// the key.
type sessionRecord struct {
	UserID     int64  `json:"user_id"`
	SecretHash []byte `json:"secret_hash,omitempty"`
	CreatedAt  int64  `json:"created_us"`
	ExpiresAt  int64  `json:"expires_us"`
	LastSeenAt int64  `json:"last_seen_us"`
	// RevokedAt is absent while the session is not revoked.
	RevokedAt *int64 `json:"revoked_us,omitempty"`
	// UserAgent and Address come from the client's request, which may
	// hold any bytes (a header may carry bytes that are not UTF-8, and a
	// bound may cut a rune), so they are bytes: a JSON string would
	// replace invalid UTF-8. They and AMR are absent when empty, as in
	// every record written before they existed.
	UserAgent []byte   `json:"user_agent,omitempty"`
	Address   []byte   `json:"address,omitempty"`
	AMR       []string `json:"amr,omitempty"`
}

// apiKeyRecord is the stored form of store.APIKey.
type apiKeyRecord struct {
	Workspace  string   `json:"workspace"`
	Name       string   `json:"name,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
	SecretHash []byte   `json:"secret_hash,omitempty"`
	CreatedAt  int64    `json:"created_us"`
}

func encodeWorkspace(w store.Workspace) ([]byte, error) {
	return json.Marshal(workspaceRecord{CreatedAt: toMicros(w.CreatedAt), Settings: w.Settings})
}

func decodeWorkspace(slug, v []byte) (store.Workspace, error) {
	var r workspaceRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Workspace{}, fmt.Errorf("boltstore: workspace %q: %w", slug, err)
	}
	return store.Workspace{Slug: string(slug), CreatedAt: fromMicros(r.CreatedAt), Settings: r.Settings}, nil
}

// Claim mapper record format, version 2, binary because Claims reads every
// mapper of the workspace for every token:
//
//	byte     format version (mapperFormatV2)
//	byte     flags (mapperInAccess | mapperInID)
//	varint   Version
//	bytes    ClaimName, to the end of the record
//
// The attribute key is the bbolt key. Version 1 records, written before
// mappers had versions, lack the Version field and read as Version 0.
const (
	mapperFormatV1 = 1
	mapperFormatV2 = 2
)

// Flags of the claim mapper record.
const (
	mapperInAccess = 1 << iota
	mapperInID
)

func encodeMapper(m store.ClaimMapper) ([]byte, error) {
	var flags byte
	if m.IncludeInAccess {
		flags |= mapperInAccess
	}
	if m.IncludeInID {
		flags |= mapperInID
	}
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(m.ClaimName))
	b = append(b, mapperFormatV2, flags)
	b = binary.AppendVarint(b, m.Version)
	return append(b, m.ClaimName...), nil
}

func decodeMapper(attributeKey, v []byte) (store.ClaimMapper, error) {
	corrupt := fmt.Errorf("boltstore: claim mapper %q: unknown or corrupt record", attributeKey)
	if len(v) < 2 || (v[0] != mapperFormatV1 && v[0] != mapperFormatV2) {
		return store.ClaimMapper{}, corrupt
	}
	m := store.ClaimMapper{
		AttributeKey:    string(attributeKey),
		IncludeInAccess: v[1]&mapperInAccess != 0,
		IncludeInID:     v[1]&mapperInID != 0,
	}
	name := v[2:]
	if v[0] == mapperFormatV2 {
		version, n := binary.Varint(name)
		if n <= 0 {
			return store.ClaimMapper{}, corrupt
		}
		m.Version, name = version, name[n:]
	}
	m.ClaimName = string(name)
	return m, nil
}

func encodeWebhook(w store.Webhook) ([]byte, error) {
	return json.Marshal(webhookRecord{
		URL:          w.URL,
		Description:  w.Description,
		Events:       w.Events,
		Enabled:      w.Enabled,
		CreatedAt:    toMicros(w.CreatedAt),
		Secret:       w.Secret,
		FailingSince: optMicros(w.FailingSince),
		Version:      w.Version,
	})
}

func decodeWebhook(k, v []byte) (store.Webhook, error) {
	var r webhookRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Webhook{}, fmt.Errorf("boltstore: webhook %d: %w", decodeID(k), err)
	}
	return store.Webhook{
		ID:           decodeID(k),
		URL:          r.URL,
		Description:  r.Description,
		Events:       r.Events,
		Enabled:      r.Enabled,
		CreatedAt:    fromMicros(r.CreatedAt),
		Secret:       r.Secret,
		FailingSince: fromOptMicros(r.FailingSince),
		Version:      r.Version,
	}, nil
}

func encodeDelivery(d store.Delivery) ([]byte, error) {
	return json.Marshal(deliveryRecord{
		EventID:       d.EventID,
		EventType:     d.EventType,
		Payload:       d.Payload,
		CreatedAt:     toMicros(d.CreatedAt),
		Status:        string(d.Status),
		Attempts:      d.Attempts,
		NextAttemptAt: toMicros(d.NextAttemptAt),
		LeaseUntil:    optMicros(d.LeaseUntil),
		LeaseOwner:    d.LeaseOwner,
		LastAttemptAt: optMicros(d.LastAttemptAt),
		LastStatus:    d.LastStatus,
		LastError:     d.LastError,
		UserID:        d.UserID,
	})
}

// decodeDelivery decodes a delivery stored under k, endpoint id + id.
func decodeDelivery(k, v []byte) (store.Delivery, error) {
	var r deliveryRecord
	id := decodeID(k[idKeyLen:])
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Delivery{}, fmt.Errorf("boltstore: delivery %d: %w", id, err)
	}
	endpoint := decodeID(k)
	return store.Delivery{
		ID:            id,
		Kind:          kindOf(endpoint),
		EndpointID:    endpoint,
		EventID:       r.EventID,
		EventType:     r.EventType,
		Payload:       r.Payload,
		CreatedAt:     fromMicros(r.CreatedAt),
		Status:        store.DeliveryStatus(r.Status),
		Attempts:      r.Attempts,
		NextAttemptAt: fromMicros(r.NextAttemptAt),
		LeaseUntil:    fromOptMicros(r.LeaseUntil),
		LeaseOwner:    r.LeaseOwner,
		LastAttemptAt: fromOptMicros(r.LastAttemptAt),
		LastStatus:    r.LastStatus,
		LastError:     r.LastError,
		UserID:        r.UserID,
	}, nil
}

// kindOf returns the kind of the jobs stored under the endpoint.
func kindOf(endpoint int64) store.JobKind {
	if endpoint == 0 {
		return store.JobMail
	}
	return store.JobWebhook
}

func encodeAPIKey(k store.APIKey) ([]byte, error) {
	return json.Marshal(apiKeyRecord{
		Workspace:  k.Workspace,
		Name:       k.Name,
		Scopes:     k.Scopes,
		SecretHash: k.SecretHash,
		CreatedAt:  toMicros(k.CreatedAt),
	})
}

func decodeAPIKey(id, v []byte) (store.APIKey, error) {
	var r apiKeyRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.APIKey{}, fmt.Errorf("boltstore: api key %q: %w", id, err)
	}
	return store.APIKey{
		ID:         string(id),
		Workspace:  r.Workspace,
		Name:       r.Name,
		Scopes:     r.Scopes,
		SecretHash: r.SecretHash,
		CreatedAt:  fromMicros(r.CreatedAt),
	}, nil
}

func encodeSession(s store.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{
		UserID:     s.UserID,
		SecretHash: s.SecretHash,
		CreatedAt:  toMicros(s.CreatedAt),
		ExpiresAt:  toMicros(s.ExpiresAt),
		LastSeenAt: toMicros(s.LastSeenAt),
		RevokedAt:  optMicros(s.RevokedAt),
		UserAgent:  []byte(s.UserAgent),
		Address:    []byte(s.Address),
		AMR:        s.AMR,
	})
}

func decodeSession(id, v []byte) (store.Session, error) {
	var r sessionRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Session{}, fmt.Errorf("boltstore: session %q: %w", id, err)
	}
	return store.Session{
		ID:         string(id),
		UserID:     r.UserID,
		SecretHash: r.SecretHash,
		CreatedAt:  fromMicros(r.CreatedAt),
		ExpiresAt:  fromMicros(r.ExpiresAt),
		LastSeenAt: fromMicros(r.LastSeenAt),
		RevokedAt:  fromOptMicros(r.RevokedAt),
		UserAgent:  string(r.UserAgent),
		Address:    string(r.Address),
		AMR:        r.AMR,
	}, nil
}

// tokenRecord is the stored form of store.VerificationToken; the token id
// is the key.
type tokenRecord struct {
	UserID     int64  `json:"user_id"`
	Email      string `json:"email"`
	SecretHash []byte `json:"secret_hash,omitempty"`
	CreatedAt  int64  `json:"created_us"`
	ExpiresAt  int64  `json:"expires_us"`
	// UsedAt is absent until the token has been used.
	UsedAt *int64 `json:"used_us,omitempty"`
	// Purpose is absent for store.PurposeVerifyEmail, the purpose of every
	// token written before purposes existed.
	Purpose string `json:"purpose,omitempty"`
}

func encodeToken(v store.VerificationToken) ([]byte, error) {
	return json.Marshal(tokenRecord{
		UserID:     v.UserID,
		Email:      v.Email,
		SecretHash: v.SecretHash,
		CreatedAt:  toMicros(v.CreatedAt),
		ExpiresAt:  toMicros(v.ExpiresAt),
		UsedAt:     optMicros(v.UsedAt),
		Purpose:    string(v.Purpose),
	})
}

func decodeToken(id, v []byte) (store.VerificationToken, error) {
	var r tokenRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.VerificationToken{}, fmt.Errorf("boltstore: verification token %q: %w", id, err)
	}
	return store.VerificationToken{
		ID:         string(id),
		UserID:     r.UserID,
		Email:      r.Email,
		SecretHash: r.SecretHash,
		CreatedAt:  fromMicros(r.CreatedAt),
		ExpiresAt:  fromMicros(r.ExpiresAt),
		UsedAt:     fromOptMicros(r.UsedAt),
		Purpose:    store.TokenPurpose(r.Purpose),
	}, nil
}

// The records of the OpenID Provider. The id of each is its bbolt key. A
// time that is zero until something happens (a key's activation and
// retirement, a request's sign-in and redemption, a grant's revocation, a
// token's use) is omitted while zero, as a session's RevokedAt is.

// signingKeyRecord is the stored form of store.SigningKey.
type signingKeyRecord struct {
	Algorithm   string `json:"alg"`
	State       string `json:"state"`
	PrivateKey  []byte `json:"private_key,omitempty"`
	PublicKey   []byte `json:"public_key,omitempty"`
	CreatedAt   int64  `json:"created_us"`
	ActivatedAt *int64 `json:"activated_us,omitempty"`
	RetiredAt   *int64 `json:"retired_us,omitempty"`
	RemoveAt    *int64 `json:"remove_us,omitempty"`
}

func encodeSigningKey(k store.SigningKey) ([]byte, error) {
	return json.Marshal(signingKeyRecord{
		Algorithm:   k.Algorithm,
		State:       k.State,
		PrivateKey:  k.PrivateKey,
		PublicKey:   k.PublicKey,
		CreatedAt:   toMicros(k.CreatedAt),
		ActivatedAt: optMicros(k.ActivatedAt),
		RetiredAt:   optMicros(k.RetiredAt),
		RemoveAt:    optMicros(k.RemoveAt),
	})
}

func decodeSigningKey(id, v []byte) (store.SigningKey, error) {
	var r signingKeyRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.SigningKey{}, fmt.Errorf("boltstore: signing key %q: %w", id, err)
	}
	return store.SigningKey{
		ID:          string(id),
		Algorithm:   r.Algorithm,
		State:       r.State,
		PrivateKey:  r.PrivateKey,
		PublicKey:   r.PublicKey,
		CreatedAt:   fromMicros(r.CreatedAt),
		ActivatedAt: fromOptMicros(r.ActivatedAt),
		RetiredAt:   fromOptMicros(r.RetiredAt),
		RemoveAt:    fromOptMicros(r.RemoveAt),
	}, nil
}

// authRequestRecord is the stored form of store.AuthRequest. State,
// Nonce and UILocales, which the relying party chooses, and SessionID,
// which names a session whose id the caller chose, are bytes: a JSON
// string would replace invalid UTF-8. UILocales and AMR are absent when
// empty, as in every record written before they existed; AMR holds the
// identity package's RFC 8176 values, strings as scopes are.
type authRequestRecord struct {
	ClientID            string   `json:"client_id"`
	RedirectURI         string   `json:"redirect_uri"`
	Scopes              []string `json:"scopes,omitempty"`
	State               []byte   `json:"state,omitempty"`
	Nonce               []byte   `json:"nonce,omitempty"`
	CodeChallenge       string   `json:"code_challenge,omitempty"`
	CodeChallengeMethod string   `json:"code_challenge_method,omitempty"`
	Prompt              string   `json:"prompt,omitempty"`
	UILocales           []byte   `json:"ui_locales,omitempty"`
	CreatedAt           int64    `json:"created_us"`
	ExpiresAt           int64    `json:"expires_us"`
	UserID              int64    `json:"user_id,omitempty"`
	SessionID           []byte   `json:"session_id,omitempty"`
	AuthTime            *int64   `json:"auth_time_us,omitempty"`
	AMR                 []string `json:"amr,omitempty"`
	CodeHash            []byte   `json:"code_hash,omitempty"`
	UsedAt              *int64   `json:"used_us,omitempty"`
	GrantID             string   `json:"grant_id,omitempty"`
}

func encodeAuthRequest(r store.AuthRequest) ([]byte, error) {
	return json.Marshal(authRequestRecord{
		ClientID:            r.ClientID,
		RedirectURI:         r.RedirectURI,
		Scopes:              r.Scopes,
		State:               []byte(r.State),
		Nonce:               []byte(r.Nonce),
		CodeChallenge:       r.CodeChallenge,
		CodeChallengeMethod: r.CodeChallengeMethod,
		Prompt:              r.Prompt,
		UILocales:           []byte(r.UILocales),
		CreatedAt:           toMicros(r.CreatedAt),
		ExpiresAt:           toMicros(r.ExpiresAt),
		UserID:              r.UserID,
		SessionID:           []byte(r.SessionID),
		AuthTime:            optMicros(r.AuthTime),
		AMR:                 r.AMR,
		CodeHash:            r.CodeHash,
		UsedAt:              optMicros(r.UsedAt),
		GrantID:             r.GrantID,
	})
}

func decodeAuthRequest(id, v []byte) (store.AuthRequest, error) {
	var r authRequestRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.AuthRequest{}, fmt.Errorf("boltstore: authorization request %q: %w", id, err)
	}
	return store.AuthRequest{
		ID:                  string(id),
		ClientID:            r.ClientID,
		RedirectURI:         r.RedirectURI,
		Scopes:              r.Scopes,
		State:               string(r.State),
		Nonce:               string(r.Nonce),
		CodeChallenge:       r.CodeChallenge,
		CodeChallengeMethod: r.CodeChallengeMethod,
		Prompt:              r.Prompt,
		UILocales:           string(r.UILocales),
		CreatedAt:           fromMicros(r.CreatedAt),
		ExpiresAt:           fromMicros(r.ExpiresAt),
		UserID:              r.UserID,
		SessionID:           string(r.SessionID),
		AuthTime:            fromOptMicros(r.AuthTime),
		AMR:                 r.AMR,
		CodeHash:            r.CodeHash,
		UsedAt:              fromOptMicros(r.UsedAt),
		GrantID:             r.GrantID,
	}, nil
}

// grantRecord is the stored form of store.Grant; SessionID is bytes, as
// in authRequestRecord. AuthTime is zero, and AMR absent, for a client's
// grant on its own behalf; AMR is absent too in every record written
// before it existed.
type grantRecord struct {
	ClientID     string   `json:"client_id"`
	UserID       int64    `json:"user_id,omitempty"`
	SessionID    []byte   `json:"session_id,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	AuthTime     *int64   `json:"auth_time_us,omitempty"`
	AMR          []string `json:"amr,omitempty"`
	CreatedAt    int64    `json:"created_us"`
	ExpiresAt    int64    `json:"expires_us"`
	RevokedAt    *int64   `json:"revoked_us,omitempty"`
	RevokeReason string   `json:"revoke_reason,omitempty"`
}

func encodeGrant(g store.Grant) ([]byte, error) {
	return json.Marshal(grantRecord{
		ClientID:     g.ClientID,
		UserID:       g.UserID,
		SessionID:    []byte(g.SessionID),
		Scopes:       g.Scopes,
		AuthTime:     optMicros(g.AuthTime),
		AMR:          g.AMR,
		CreatedAt:    toMicros(g.CreatedAt),
		ExpiresAt:    toMicros(g.ExpiresAt),
		RevokedAt:    optMicros(g.RevokedAt),
		RevokeReason: g.RevokeReason,
	})
}

func decodeGrant(id, v []byte) (store.Grant, error) {
	var r grantRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Grant{}, fmt.Errorf("boltstore: grant %q: %w", id, err)
	}
	return store.Grant{
		ID:           string(id),
		ClientID:     r.ClientID,
		UserID:       r.UserID,
		SessionID:    string(r.SessionID),
		Scopes:       r.Scopes,
		AuthTime:     fromOptMicros(r.AuthTime),
		AMR:          r.AMR,
		CreatedAt:    fromMicros(r.CreatedAt),
		ExpiresAt:    fromMicros(r.ExpiresAt),
		RevokedAt:    fromOptMicros(r.RevokedAt),
		RevokeReason: r.RevokeReason,
	}, nil
}

// refreshTokenRecord is the stored form of store.RefreshToken.
// SuccessorID, like UsedAt, is absent until the token is exchanged, and
// in every record written before it existed.
type refreshTokenRecord struct {
	GrantID     string `json:"grant_id"`
	SecretHash  []byte `json:"secret_hash,omitempty"`
	CreatedAt   int64  `json:"created_us"`
	ExpiresAt   int64  `json:"expires_us"`
	UsedAt      *int64 `json:"used_us,omitempty"`
	SuccessorID string `json:"successor_id,omitempty"`
}

func encodeRefreshToken(t store.RefreshToken) ([]byte, error) {
	return json.Marshal(refreshTokenRecord{
		GrantID:     t.GrantID,
		SecretHash:  t.SecretHash,
		CreatedAt:   toMicros(t.CreatedAt),
		ExpiresAt:   toMicros(t.ExpiresAt),
		UsedAt:      optMicros(t.UsedAt),
		SuccessorID: t.SuccessorID,
	})
}

func decodeRefreshToken(id, v []byte) (store.RefreshToken, error) {
	var r refreshTokenRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.RefreshToken{}, fmt.Errorf("boltstore: refresh token %q: %w", id, err)
	}
	return store.RefreshToken{
		ID:          string(id),
		GrantID:     r.GrantID,
		SecretHash:  r.SecretHash,
		CreatedAt:   fromMicros(r.CreatedAt),
		ExpiresAt:   fromMicros(r.ExpiresAt),
		UsedAt:      fromOptMicros(r.UsedAt),
		SuccessorID: r.SuccessorID,
	}, nil
}

// loginAttemptsRecord is the stored form of store.LoginAttempts; the user
// id is the key. Pending keeps the times in the order written. LockedUntil
// is omitted while zero, as the OpenID Provider's later times are.
type loginAttemptsRecord struct {
	Failures    int     `json:"failures,omitempty"`
	Pending     []int64 `json:"pending_us,omitempty"`
	LockedUntil *int64  `json:"locked_until_us,omitempty"`
}

func encodeLoginAttempts(a store.LoginAttempts) ([]byte, error) {
	r := loginAttemptsRecord{Failures: a.Failures, LockedUntil: optMicros(a.LockedUntil)}
	if len(a.Pending) > 0 {
		r.Pending = make([]int64, len(a.Pending))
		for i, p := range a.Pending {
			r.Pending[i] = toMicros(p)
		}
	}
	return json.Marshal(r)
}

// decodeLoginAttempts decodes the record v stored under k, the user's id
// key.
func decodeLoginAttempts(k, v []byte) (store.LoginAttempts, error) {
	userID := decodeID(k)
	var r loginAttemptsRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.LoginAttempts{}, fmt.Errorf("boltstore: login attempts of user %d: %w", userID, err)
	}
	a := store.LoginAttempts{UserID: userID, Failures: r.Failures, LockedUntil: fromOptMicros(r.LockedUntil)}
	if len(r.Pending) > 0 {
		a.Pending = make([]time.Time, len(r.Pending))
		for i, us := range r.Pending {
			a.Pending[i] = fromMicros(us)
		}
	}
	return a, nil
}

// secondFactorRecord is the stored form of store.SecondFactor; the user
// id is the key. RecoveryCodes keeps the hashes in the order written.
// ConfirmedAt is omitted while zero, as a lock's end is.
type secondFactorRecord struct {
	Secret        []byte   `json:"secret,omitempty"`
	Confirmed     bool     `json:"confirmed,omitempty"`
	CreatedAt     int64    `json:"created_us"`
	ConfirmedAt   *int64   `json:"confirmed_us,omitempty"`
	LastStep      int64    `json:"last_step,omitempty"`
	RecoveryCodes [][]byte `json:"recovery_codes,omitempty"`
}

func encodeSecondFactor(f store.SecondFactor) ([]byte, error) {
	return json.Marshal(secondFactorRecord{
		Secret:        f.Secret,
		Confirmed:     f.Confirmed,
		CreatedAt:     toMicros(f.CreatedAt),
		ConfirmedAt:   optMicros(f.ConfirmedAt),
		LastStep:      f.LastStep,
		RecoveryCodes: f.RecoveryCodes,
	})
}

// decodeSecondFactor decodes the record v stored under k, the user's id
// key.
func decodeSecondFactor(k, v []byte) (store.SecondFactor, error) {
	userID := decodeID(k)
	var r secondFactorRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.SecondFactor{}, fmt.Errorf("boltstore: second factor of user %d: %w", userID, err)
	}
	return store.SecondFactor{
		UserID:        userID,
		Secret:        r.Secret,
		Confirmed:     r.Confirmed,
		CreatedAt:     fromMicros(r.CreatedAt),
		ConfirmedAt:   fromOptMicros(r.ConfirmedAt),
		LastStep:      r.LastStep,
		RecoveryCodes: r.RecoveryCodes,
	}, nil
}

// namedRecord is the stored form of store.Role and of store.Group, which
// have the same fields; the id is the key.
type namedRecord struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	CreatedAt   int64  `json:"created_us"`
	UpdatedAt   int64  `json:"updated_us"`
	Version     int64  `json:"version,omitempty"`
}

func encodeRole(r store.Role) ([]byte, error) {
	return json.Marshal(namedRecord{
		Name:        r.Name,
		Description: r.Description,
		CreatedAt:   toMicros(r.CreatedAt),
		UpdatedAt:   toMicros(r.UpdatedAt),
		Version:     r.Version,
	})
}

// A group's record is a role's, under another name.

func encodeGroup(g store.Group) ([]byte, error) { return encodeRole(store.Role(g)) }

// decodeRole decodes the record v stored under k, the role's id key.
func decodeRole(k, v []byte) (store.Role, error) {
	r, err := decodeNamed(k, v)
	if err != nil {
		return store.Role{}, fmt.Errorf("boltstore: role %d: %w", decodeID(k), err)
	}
	return r, nil
}

// decodeGroup decodes the record v stored under k, the group's id key.
func decodeGroup(k, v []byte) (store.Group, error) {
	r, err := decodeNamed(k, v)
	if err != nil {
		return store.Group{}, fmt.Errorf("boltstore: group %d: %w", decodeID(k), err)
	}
	return store.Group(r), nil
}

// decodeNamed decodes a namedRecord stored under k into the fields of a
// role (a group's, converted, are the same).
func decodeNamed(k, v []byte) (store.Role, error) {
	var r namedRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Role{}, err
	}
	return store.Role{
		ID:          decodeID(k),
		Name:        r.Name,
		Description: r.Description,
		CreatedAt:   fromMicros(r.CreatedAt),
		UpdatedAt:   fromMicros(r.UpdatedAt),
		Version:     r.Version,
	}, nil
}

// Asset record format, version 1, binary because an asset is mostly its
// bytes (up to some 64 KiB of them): in JSON they would be base64, a third
// larger on disk and decoded on every read.
//
//	byte     format version (assetFormatV1)
//	string   ContentType    (each string: uvarint length, then bytes)
//	varint   UpdatedAt      (unix microseconds, UTC)
//	string   Data           (the bytes as given, any of them)
//
// The name is the key and is not repeated. As in the user record, a later
// field is appended at the end and read only when present, and a decoder
// ignores bytes after the fields it knows; a change that is not an append
// gets a new version byte, which old code refuses.
const assetFormatV1 = 1

// encodeAsset returns the record of a.
func encodeAsset(a store.Asset) ([]byte, error) {
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(a.ContentType)+len(a.Data))
	b = append(b, assetFormatV1)
	b = appendString(b, a.ContentType)
	b = binary.AppendVarint(b, toMicros(a.UpdatedAt))
	// Data is laid out as appendString lays out a string, without the
	// copy that converting it to one would cost.
	b = binary.AppendUvarint(b, uint64(len(a.Data)))
	return append(b, a.Data...), nil
}

// decodeAsset decodes the record v stored under name. It copies: v
// belongs to bbolt and is valid only during the transaction. Empty Data
// reads back nil, as an empty []byte field of a JSON record does.
func decodeAsset(name, v []byte) (store.Asset, error) {
	if len(v) < 1 || v[0] != assetFormatV1 {
		return store.Asset{}, errCorruptAsset(name)
	}
	contentType, rest, ok := readString(v[1:])
	if !ok {
		return store.Asset{}, errCorruptAsset(name)
	}
	updated, w := binary.Varint(rest)
	if w <= 0 {
		return store.Asset{}, errCorruptAsset(name)
	}
	data, _, ok := readBytes(rest[w:])
	if !ok {
		return store.Asset{}, errCorruptAsset(name)
	}
	a := store.Asset{Name: string(name), ContentType: contentType, UpdatedAt: fromMicros(updated)}
	if len(data) > 0 {
		a.Data = bytes.Clone(data)
	}
	return a, nil
}

// errCorruptAsset reports an asset record that does not decode.
func errCorruptAsset(name []byte) error {
	return fmt.Errorf("boltstore: asset %q: unknown or corrupt record", name)
}

// readBytes reads bytes written with a uvarint length prefix from the
// start of b, as readString does, and returns them, not copied, and the
// rest of b.
func readBytes(b []byte) (field, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

// Audit record format, version 1, binary because the trail is the
// largest bucket of a busy workspace (a page of it decodes 50 records at
// a time), its Changes are bytes that JSON would write in base64, and its
// strings (a user agent, the login a failed sign-in tried) are kept as
// given, valid UTF-8 or not, which a JSON string would not keep:
//
//	byte     format version (auditFormatV1)
//	varint   Time           (unix microseconds, UTC)
//	string   ActorKind      (each string: uvarint length, then bytes)
//	string   ActorID
//	string   ActorDisplay
//	string   Action
//	string   TargetKind
//	string   TargetID
//	string   TargetDisplay
//	string   Outcome
//	string   Reason
//	string   Address
//	string   UserAgent
//	string   RequestID
//	string   Changes        (the bytes as given, any of them)
//
// The id is the key and is not repeated. As in the user record, a later
// field is appended at the end and read only when present, and a decoder
// ignores bytes after the fields it knows; a change that is not an append
// gets a new version byte, which old code refuses.
const auditFormatV1 = 1

// encodeAudit returns the record of r.
func encodeAudit(r store.AuditRecord) ([]byte, error) {
	fields := auditStrings(&r)
	size := 1 + binary.MaxVarintLen64 + (len(fields)+1)*binary.MaxVarintLen64 + len(r.Changes)
	for _, s := range fields {
		size += len(*s)
	}
	b := make([]byte, 0, size)
	b = append(b, auditFormatV1)
	b = binary.AppendVarint(b, toMicros(r.Time))
	for _, s := range fields {
		b = appendString(b, *s)
	}
	// Changes is laid out as appendString lays out a string, without the
	// copy that converting it to one would cost.
	b = binary.AppendUvarint(b, uint64(len(r.Changes)))
	return append(b, r.Changes...), nil
}

// auditStrings returns the string fields of r in record order.
func auditStrings(r *store.AuditRecord) [12]*string {
	return [...]*string{
		&r.ActorKind, &r.ActorID, &r.ActorDisplay, &r.Action,
		&r.TargetKind, &r.TargetID, &r.TargetDisplay, &r.Outcome,
		&r.Reason, &r.Address, &r.UserAgent, &r.RequestID,
	}
}

// decodeAudit decodes the record v stored under id. It copies: v belongs
// to bbolt and is valid only during the transaction. Empty Changes read
// back nil, as an empty []byte field of a JSON record does.
func decodeAudit(id, v []byte) (store.AuditRecord, error) {
	if len(v) < 1 || v[0] != auditFormatV1 {
		return store.AuditRecord{}, errCorruptAudit(id)
	}
	d := userDecoder{b: v, s: string(v), pos: 1} // one copy serves every string
	r := store.AuditRecord{ID: string(id), Time: fromMicros(d.varint())}
	for _, s := range auditStrings(&r) {
		*s = d.string()
	}
	if d.bad {
		return store.AuditRecord{}, errCorruptAudit(id)
	}
	changes, _, ok := readBytes(v[d.pos:])
	if !ok {
		return store.AuditRecord{}, errCorruptAudit(id)
	}
	if len(changes) > 0 {
		r.Changes = bytes.Clone(changes)
	}
	return r, nil
}

// errCorruptAudit reports an audit record that does not decode.
func errCorruptAudit(id []byte) error {
	return fmt.Errorf("boltstore: audit record %q: unknown or corrupt record", id)
}
