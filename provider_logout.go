package identity

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// EndSessionRequest is an RP-initiated logout request (OpenID Connect
// RP-Initiated Logout 1.0), with the session token of the provider's
// cookie if the browser sent one.
type EndSessionRequest struct {
	IDTokenHint           string
	ClientID              string
	PostLogoutRedirectURI string
	State                 string
	SessionToken          string
	// Confirmed says that the user confirmed the logout (a form the
	// provider showed, posted back with its CSRF token), which a logout
	// not proven to come from the session's client needs.
	Confirmed bool
}

// EndSession logs a user out: it revokes the session of the cookie's
// token, or else the one the ID token hint names, with session.revoked,
// and revokes the grants issued in that session. It returns where to send
// the browser: PostLogoutRedirectURI with State when given, which must be
// registered exactly for the client (ClientID or the hint's audience;
// CodeInvalid on "post_logout_redirect_uri" otherwise: show it, do not
// redirect), or "" for a signed-out page. Logging out without a live
// session succeeds.
//
// Ending a live session needs the user's confirmation (req.Confirmed)
// unless the hint names the very session of the cookie: any page can send
// a browser to the logout endpoint (an <img> will do), and only a client
// holding the session's ID token proves it acts for the user (OpenID
// Connect RP-Initiated Logout 1.0 section 2). Without it, EndSession
// changes nothing and returns CodeConfirmationRequired, after checking
// the request, so that the provider asks first.
//
// A hint must verify against the workspace's published keys (CodeInvalid
// on "id_token_hint" otherwise): it may have expired, but a hint signed
// by a key retired and then removed (when every token it signed had
// expired) no longer verifies, and neither does an unsigned or forged
// one, since its sid would name a session to end. A client then logs out
// without a hint: the browser's cookie still names the session.
func (p *Provider) EndSession(ctx context.Context, req EndSessionRequest) (string, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return "", err
	}
	var redirect string
	err := w.update(ctx, func(tx store.Tx) error {
		now := w.svc.timestamp()
		clientID, sessionID, err := w.logoutHint(tx, req, now)
		if err != nil {
			return err
		}
		if redirect, err = w.logoutRedirect(tx, clientID, req); err != nil {
			return err
		}
		hinted := sessionID
		cookie := ""
		if id, secret, ok := parseToken(sessionPrefix, req.SessionToken); ok {
			if rec, err := tx.Session(w.slug, id); err == nil && secretMatches(secret, rec.SecretHash) {
				sessionID, cookie = rec.ID, rec.ID
			}
		}
		if sessionID == "" {
			return nil
		}
		rec, err := tx.Session(w.slug, sessionID)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		active := sessionFromRecord(rec).Active(now)
		if active && !req.Confirmed && (hinted == "" || hinted != cookie) {
			return errorf(CodeConfirmationRequired, "confirm the logout: the request does not prove it comes from the session's client")
		}
		if active {
			u, err := w.user(tx, rec.UserID)
			if err != nil {
				return err
			}
			if err := w.audit(ctx, tx, auditEntry{action: AuditSessionRevoked, target: userTarget(u), reason: revokedLogout,
				changes: auditChanges{}.set("sessionId", rec.ID, nil)}); err != nil {
				return err
			}
		}
		return w.endSession(tx, rec, revokedLogout, now)
	})
	if err != nil {
		return "", fromStore(err, "session")
	}
	return redirect, nil
}

// logoutHint checks an ID token hint, if any, and returns its client and
// session. A ClientID that is not the hint's audience is CodeInvalid.
func (w *Workspace) logoutHint(tx store.Tx, req EndSessionRequest, now time.Time) (clientID, sessionID string, err error) {
	if req.IDTokenHint == "" {
		return req.ClientID, "", nil
	}
	c, err := w.verifySignature(tx, req.IDTokenHint, idTokenType, time.Time{})
	if err != nil {
		if ErrorCode(err) == CodeUnauthenticated {
			var pr problems
			pr.add("id_token_hint", RuleFormat, "is not an ID token of this workspace")
			return "", "", pr.err("invalid id_token_hint")
		}
		return "", "", err
	}
	aud := c.str("aud")
	if aud == "" || req.ClientID != "" && req.ClientID != aud {
		var pr problems
		pr.add("client_id", RuleUnknown, "is not the audience of id_token_hint")
		return "", "", pr.err("client_id does not match id_token_hint")
	}
	return aud, c.str("sid"), nil
}

// logoutRedirect returns the post-logout redirect, checked against the
// client's registered URIs.
func (w *Workspace) logoutRedirect(tx store.Tx, clientID string, req EndSessionRequest) (string, error) {
	if req.PostLogoutRedirectURI == "" {
		return "", nil
	}
	var p problems
	c, err := tx.OAuthClient(w.slug, clientID)
	if err != nil && !isNotFound(err) {
		return "", err
	}
	if err != nil || !slices.Contains(c.PostLogoutRedirectURIs, req.PostLogoutRedirectURI) {
		p.add("post_logout_redirect_uri", RuleUnknown, "is not registered for the client")
		return "", p.err("post_logout_redirect_uri is not registered for the client")
	}
	return withQuery(req.PostLogoutRedirectURI, url.Values{"state": {req.State}}), nil
}

// withQuery returns uri with the non-empty params added to its query.
func withQuery(uri string, params url.Values) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Add(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
