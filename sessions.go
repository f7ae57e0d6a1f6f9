package identity

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// DefaultSessionLifetime is how long a session lasts when
// Options.SessionLifetime is zero.
const DefaultSessionLifetime = 24 * time.Hour

// sessionPrefix starts every session token; see newToken for the rest.
const sessionPrefix = "ids_"

// lastSeenResolution is how stale LastSeenAt may get: VerifySession writes
// it at most this often per session, so checking a session is a read.
const lastSeenResolution = time.Minute

// Session is a login session of a user. Its token, returned once by
// Login or CreateSession (CreatedSession.Secret), is never stored: only a
// hash of its secret part.
type Session struct {
	ID         string    `json:"id"`
	UserID     int64     `json:"userId"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	// RevokedAt is nil while the session has not been revoked.
	RevokedAt *time.Time `json:"revokedAt"`
	// UserAgent and Address are the User-Agent (at most
	// MaxUserAgentLength bytes) and the client address of the request that
	// started the session (RequestInfo); empty when the program started it
	// on its own.
	UserAgent string `json:"userAgent,omitempty"`
	Address   string `json:"address,omitempty"`
	// AMR is how the user authenticated when the session started, as RFC
	// 8176 names the methods: "pwd" for a password, "otp" and "mfa" added
	// for a second factor's code (a recovery code included). ID tokens of
	// the session carry it as amr. Empty when the program started the
	// session without saying.
	AMR []string `json:"amr,omitempty"`
}

// Active reports whether the session can still be used at now.
func (s Session) Active(now time.Time) bool { return s.RevokedAt == nil && now.Before(s.ExpiresAt) }

func sessionFromRecord(r store.Session) Session {
	s := Session{ID: r.ID, UserID: r.UserID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, LastSeenAt: r.LastSeenAt,
		UserAgent: r.UserAgent, Address: r.Address, AMR: r.AMR}
	if !r.RevokedAt.IsZero() {
		revoked := r.RevokedAt
		s.RevokedAt = &revoked
	}
	return s
}

// CreatedSession is a session just started, with its token.
type CreatedSession struct {
	// User is the session's user, as the session started.
	User    User    `json:"user"`
	Session Session `json:"session"`
	// Secret is the session token ("ids_", 16 hex digits of the
	// session's ID, "_" and 43 characters of base64url), for a cookie or
	// a bearer header: shown only here, since only a hash of it is
	// stored. VerifySession takes it.
	Secret string `json:"secret"`
}

// VerifiedSession is a session token's session and its user, as
// VerifySession found them.
type VerifiedSession struct {
	Session Session `json:"session"`
	User    User    `json:"user"`
}

// Login authenticates like Authenticate and, on success, starts a session
// for the user (AMR "pwd"). A user who needs a second factor gets
// Authenticate's CodeMFARequired (or CodeMFAEnrollmentRequired) and no
// session: after VerifySecondFactor, CreateSession starts it.
func (w *Workspace) Login(ctx context.Context, login, password string) (CreatedSession, error) {
	u, err := w.Authenticate(ctx, login, password)
	if err != nil {
		return CreatedSession{}, err
	}
	return w.CreateSession(ctx, u.ID, &SessionOptions{AMR: amrPassword})
}

// The AMR of the sign-ins the library makes (RFC 8176).
var (
	amrPassword     = []string{"pwd"}
	amrSecondFactor = []string{"pwd", "otp", "mfa"}
)

// SessionOptions are the optional parts of CreateSession and
// Provider.CompleteSignIn.
type SessionOptions struct {
	// AMR says how the program authenticated the user, in RFC 8176's
	// names ("pwd", "otp", "mfa", "hwk", ...): each 1-32 characters of
	// letters, digits, '_' and '-', at most 8. VerifiedSecondFactor.AMR
	// is what a second factor after a password gives (and
	// VerifiedSecondFactor.SessionOptions the options with it).
	AMR []string
	// method, set by VerifiedSecondFactor.SessionOptions, names the
	// sign-in's method in the audit trail where AMR cannot tell (a
	// recovery code); empty: the method AMR names.
	method string
}

// maxAMR bounds SessionOptions.AMR.
const maxAMR = 8

// validate reports the options' problems.
func (o *SessionOptions) validate() error {
	if o == nil {
		return nil
	}
	var p problems
	if len(o.AMR) > maxAMR {
		p.add("amr", RuleMaxLength, "must have at most %d methods", maxAMR)
	}
	for i, m := range o.AMR {
		if !checkText(&p, "amr["+strconv.Itoa(i)+"]", m, 1, 32) {
			continue
		}
		if strings.IndexFunc(m, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			p.add("amr["+strconv.Itoa(i)+"]", RulePattern, "must be letters, digits, '_' and '-'")
		}
	}
	return p.err("invalid session options")
}

// signInMethod names the method of the sign-in the options start a
// session for, as the audit trail records it.
func (o *SessionOptions) signInMethod() string {
	switch {
	case o == nil:
		return ""
	case o.method != "":
		return o.method
	}
	return signInMethod(o.AMR)
}

// amr returns the options' AMR, or none.
func (o *SessionOptions) amr() []string {
	if o == nil {
		return nil
	}
	return slices.Clone(o.AMR)
}

// CreateSession starts a session for an enabled user, for when the
// program authenticated the user itself (a second factor, a federated
// login); opts may say how. The session records the client of the
// request (RequestInfo in ctx), and the audit trail session.created with
// its id. A disabled user is CodeForbidden, an unknown one CodeNotFound.
func (w *Workspace) CreateSession(ctx context.Context, userID int64, opts *SessionOptions) (CreatedSession, error) {
	if err := opts.validate(); err != nil {
		return CreatedSession{}, err
	}
	rec, token, err := w.newSession(ctx, userID, opts.amr())
	if err != nil {
		return CreatedSession{}, err
	}
	var u store.User
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if u, err = w.putSession(tx, rec); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditSessionCreated, target: userTarget(u),
			changes: auditChanges{}.set("sessionId", nil, rec.ID)})
	})
	if err != nil {
		return CreatedSession{}, fromStore(err, "user")
	}
	return CreatedSession{User: userFromRecord(u), Session: sessionFromRecord(rec), Secret: token}, nil
}

// newSession makes the record and token of a session of the user that
// starts now, for the client of ctx's request, authenticated by amr;
// putSession stores it.
func (w *Workspace) newSession(ctx context.Context, userID int64, amr []string) (store.Session, string, error) {
	id, secret, token, err := newToken(sessionPrefix)
	if err != nil {
		return store.Session{}, "", internal(err)
	}
	now := w.svc.timestamp()
	rec := store.Session{
		ID: id, UserID: userID, SecretHash: hashSecret(secret),
		CreatedAt: now, ExpiresAt: now.Add(w.svc.sessionLifetime), LastSeenAt: now, AMR: amr,
	}
	if info := RequestInfoFrom(ctx); info.Address.IsValid() || info.UserAgent != "" {
		rec.UserAgent = boundedUserAgent(info.UserAgent)
		if info.Address.IsValid() {
			rec.Address = info.Address.String()
		}
	}
	return rec, token, nil
}

// putSession stores a new session in tx if its user is enabled, and
// returns the user.
func (w *Workspace) putSession(tx store.Tx, rec store.Session) (store.User, error) {
	u, err := w.user(tx, rec.UserID)
	if err != nil {
		return store.User{}, err
	}
	if !u.Enabled {
		return store.User{}, errorf(CodeForbidden, "user %d is disabled", rec.UserID)
	}
	return u, tx.PutSession(w.slug, rec)
}

// VerifySession checks a session token and returns the session and its
// user. An unknown, malformed, expired or revoked token, or one whose user
// is disabled, is a CodeUnauthenticated error. The session's LastSeenAt
// moves forward at most once a minute.
func (w *Workspace) VerifySession(ctx context.Context, token string) (VerifiedSession, error) {
	invalid := errorf(CodeUnauthenticated, "invalid session")
	id, secret, ok := parseToken(sessionPrefix, token)
	if !ok {
		return VerifiedSession{}, invalid
	}
	now := w.svc.timestamp()
	var rec store.Session
	var u store.User
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if rec, err = tx.Session(w.slug, id); err != nil {
			return err
		}
		u, err = w.user(tx, rec.UserID)
		return err
	})
	switch {
	case isNotFound(err) || ErrorCode(err) == CodeNotFound:
		return VerifiedSession{}, invalid
	case err != nil:
		return VerifiedSession{}, fromStore(err, "session")
	case !secretMatches(secret, rec.SecretHash) || !sessionFromRecord(rec).Active(now) || !u.Enabled:
		return VerifiedSession{}, invalid
	}
	if now.Sub(rec.LastSeenAt) >= lastSeenResolution {
		rec = w.touchSession(ctx, rec, now)
	}
	return VerifiedSession{Session: sessionFromRecord(rec), User: userFromRecord(u)}, nil
}

// touchSession records that the session was seen at now. A failure to
// record it does not fail the check that asked.
func (w *Workspace) touchSession(ctx context.Context, rec store.Session, now time.Time) store.Session {
	err := w.update(ctx, func(tx store.Tx) error {
		cur, err := tx.Session(w.slug, rec.ID)
		if err != nil || cur.LastSeenAt.After(now) {
			return err
		}
		cur.LastSeenAt = now
		return tx.PutSession(w.slug, cur)
	})
	if err == nil {
		rec.LastSeenAt = now
	}
	return rec
}

// GetSession returns the session with the id.
func (w *Workspace) GetSession(ctx context.Context, id string) (Session, error) {
	var rec store.Session
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = tx.Session(w.slug, id)
		return err
	})
	if err != nil {
		return Session{}, fromStore(err, "session")
	}
	return sessionFromRecord(rec), nil
}

// ListSessions returns one page of the user's sessions, active, expired and
// revoked (ended ones are kept for Retention.EndedSessionDays), oldest
// first, with their number in all; Items is never nil. A nil page is the
// first DefaultPageLimit (20); an invalid page is a CodeInvalid error on
// "offset" or "limit" (see Page).
func (w *Workspace) ListSessions(ctx context.Context, userID int64, page *Page) (List[Session], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[Session]{}, err
	}
	var recs []store.Session
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		recs, total, err = tx.UserSessionsPage(w.slug, userID, pg.Offset, pg.Limit)
		return err
	})
	if err != nil {
		return List[Session]{}, fromStore(err, "user")
	}
	return List[Session]{Items: mapAll(recs, sessionFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// RevokeSession revokes the session at once, with session.revoked, and
// the grants issued in it (their access tokens fail introspection and
// their refresh tokens stop working), as ending the session at the
// provider does. Revoking a revoked or expired session succeeds and emits
// nothing; grants of it still live are revoked all the same. The audit
// trail records session.revoked (reason "revoked", the user as the
// target, the session's id in the changes) when the session was active.
func (w *Workspace) RevokeSession(ctx context.Context, id string) error {
	now := w.svc.timestamp()
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.Session(w.slug, id)
		if err != nil {
			return err
		}
		return w.revokeSessionAudited(ctx, tx, rec, now)
	})
	return fromStore(err, "session")
}

// RevokeUserSession revokes a session of the user and the grants issued
// in it, for the user themselves (a self-service page listing their
// sessions): like RevokeSession, but a session of another user is CodeNotFound, as an
// unknown one is, in the transaction that revokes.
func (w *Workspace) RevokeUserSession(ctx context.Context, userID int64, id string) error {
	now := w.svc.timestamp()
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.Session(w.slug, id)
		if err == nil && rec.UserID != userID {
			err = store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return w.revokeSessionAudited(ctx, tx, rec, now)
	})
	return fromStore(err, "session")
}

// revokeSessionAudited ends the session rec in tx as RevokeSession does,
// with its audit record when it was active.
func (w *Workspace) revokeSessionAudited(ctx context.Context, tx store.Tx, rec store.Session, now time.Time) error {
	if sessionFromRecord(rec).Active(now) {
		u, err := w.user(tx, rec.UserID)
		if err != nil {
			return err
		}
		err = w.audit(ctx, tx, auditEntry{action: AuditSessionRevoked, target: userTarget(u), reason: revokedSession,
			changes: auditChanges{}.set("sessionId", rec.ID, nil)})
		if err != nil {
			return err
		}
	}
	return w.endSession(tx, rec, revokedSession, now)
}

// revokedSession is the reason of a session revoked by RevokeSession or
// RevokeUserSession, and of the grants issued in it.
const revokedSession = "revoked"

// endSession revokes the session in tx and the grants issued in it.
func (w *Workspace) endSession(tx store.Tx, rec store.Session, reason string, now time.Time) error {
	if _, err := w.revokeSession(tx, rec, reason, now); err != nil {
		return err
	}
	return w.revokeUserGrants(tx, rec.UserID, rec.ID, reason, now)
}

// revokeSession revokes one session in tx if it is active, with its
// event, and reports whether it did.
func (w *Workspace) revokeSession(tx store.Tx, rec store.Session, reason string, now time.Time) (bool, error) {
	if !sessionFromRecord(rec).Active(now) {
		return false, nil
	}
	rec.RevokedAt = now
	if err := tx.PutSession(w.slug, rec); err != nil {
		return false, err
	}
	return true, w.emit(tx, EventSessionRevoked, sessionRevokedEvent{SessionID: rec.ID, UserID: rec.UserID, Reason: reason})
}

// revokeUserSessions revokes every active session of the user in tx and
// returns how many it revoked. The caller's audit record counts them.
func (w *Workspace) revokeUserSessions(tx store.Tx, userID int64, reason string, now time.Time) (int, error) {
	sessions, err := tx.UserSessions(w.slug, userID)
	if err != nil {
		return 0, err
	}
	revoked := 0
	for _, s := range sessions {
		ok, err := w.revokeSession(tx, s, reason, now)
		if err != nil {
			return revoked, err
		}
		if ok {
			revoked++
		}
	}
	return revoked, nil
}
