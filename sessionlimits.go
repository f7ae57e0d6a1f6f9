package identity

import (
	"context"
	"time"
)

// IssuerBase returns Options.IssuerBase: the base URL of the workspaces'
// issuers, or "" when the Service issues no tokens. An adapter that is a
// client of the library's own OpenID Provider (package console) builds
// its addresses from it.
func (s *Service) IssuerBase() string { return s.issuerBase }

// SessionLimits bound a session more tightly than the Service's
// SessionLifetime, for a program whose own sessions must be shorter (an
// operator console): a zero field adds no bound.
type SessionLimits struct {
	// MaxAge is how long after its creation the session may be used.
	MaxAge time.Duration
	// IdleTimeout is how long the session may go unused: a session whose
	// LastSeenAt is this long ago is over. LastSeenAt moves at most once a
	// minute (see VerifySession), so the timeout is exact to a minute.
	IdleTimeout time.Duration
}

// VerifySessionWithin checks a session token as VerifySession does and
// also refuses, as CodeUnauthenticated, a session older than lim.MaxAge or
// unused for lim.IdleTimeout; such a session is revoked on the way (as
// RevokeSession does, audited), so that it shows as ended wherever the
// user's sessions are listed. The limits are checked against the session
// as stored, before this check moves its LastSeenAt.
func (w *Workspace) VerifySessionWithin(ctx context.Context, token string, lim SessionLimits) (VerifiedSession, error) {
	invalid := errorf(CodeUnauthenticated, "invalid session")
	id, _, ok := parseToken(sessionPrefix, token)
	if !ok {
		return VerifiedSession{}, invalid
	}
	s, err := w.GetSession(ctx, id)
	switch {
	case ErrorCode(err) == CodeNotFound:
		return VerifiedSession{}, invalid
	case err != nil:
		return VerifiedSession{}, err
	}
	now := w.svc.timestamp()
	over := lim.MaxAge > 0 && !now.Before(s.CreatedAt.Add(lim.MaxAge)) ||
		lim.IdleTimeout > 0 && !now.Before(s.LastSeenAt.Add(lim.IdleTimeout))
	if !over {
		return w.VerifySession(ctx, token)
	}
	// Only the holder of the token may end the session this way.
	if _, err := w.VerifySession(ctx, token); err != nil {
		return VerifiedSession{}, err
	}
	if err := w.RevokeSession(ctx, id); err != nil {
		return VerifiedSession{}, err
	}
	return VerifiedSession{}, invalid
}
