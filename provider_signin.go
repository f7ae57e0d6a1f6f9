package identity

import (
	"context"

	"github.com/identitylib/identity/store"
)

// SignIn is a sign-in that completed an authorization request: where to
// send the browser, and the session it started.
type SignIn struct {
	// Authorization holds the code, the redirect URI and the state to
	// send the browser back to the client with.
	Authorization Authorization
	// CreatedSession is the session started, with its token for the
	// provider's cookie (ResumeSignIn takes it).
	CreatedSession
}

// SignIn signs a user in for a stored authorization request (a sign-in
// page's form): it authenticates like Workspace.Login (one
// CodeUnauthenticated error, "invalid credentials", whether the user is
// unknown, the password wrong or the user disabled, and login.failed),
// starts a session, completes the request with a code and emits
// login.succeeded.
//
// A user who needs a second factor gets Authenticate's CodeMFARequired or
// CodeMFAEnrollmentRequired instead, with Error.Challenge; after
// Provider.VerifySecondFactor, CompleteSignIn finishes the request.
//
// The audit trail records a refusal as Authenticate does, and a success
// once, with the request's completion: sign_in.succeeded, the user its
// actor, with method "password", the client and the session.
func (p *Provider) SignIn(ctx context.Context, requestID, login, password string) (SignIn, error) {
	if _, err := p.GetPendingAuthorization(ctx, requestID); err != nil {
		return SignIn{}, err
	}
	u, err := p.w.authenticate(ctx, login, password, requestID)
	if err != nil {
		return SignIn{}, err
	}
	return p.CompleteSignIn(ctx, requestID, u.ID, &SessionOptions{AMR: amrPassword})
}

// CompleteSignIn completes a stored authorization request for a user the
// program authenticated (Provider.VerifySecondFactor after SignIn asked
// for a code, with its VerifiedSecondFactor.SessionOptions() as opts, or
// a sign-in of its own): it starts a session, issues the code and emits
// login.succeeded in one transaction, and returns what SignIn returns.
// opts.AMR becomes the session's and the ID tokens' amr. A disabled user
// is CodeUnauthenticated; a request that is unknown, completed or expired
// CodeTokenInvalid or CodeTokenExpired. The audit trail records
// sign_in.succeeded in the same transaction: the user its actor, the
// method ("password+totp" or "recovery_code" from a verified second
// factor's options, otherwise from opts.AMR: "password", or the methods
// joined by "+"), the client and the session.
func (p *Provider) CompleteSignIn(ctx context.Context, requestID string, userID int64, opts *SessionOptions) (SignIn, error) {
	w := p.w
	if err := opts.validate(); err != nil {
		return SignIn{}, err
	}
	session, token, err := w.newSession(ctx, userID, opts.amr())
	if err != nil {
		return SignIn{}, err
	}
	// The session, the code and the event commit together: a request that
	// expired or was completed meanwhile leaves no session behind.
	var auth Authorization
	var u store.User
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if u, err = w.putSession(tx, session); err != nil {
			return err
		}
		auth, err = w.completeRequest(ctx, tx, requestID, u, sessionFromRecord(session), opts.signInMethod())
		return err
	})
	if ErrorCode(err) == CodeForbidden {
		// Disabled between the password check and now: the same answer.
		return SignIn{}, errInvalidCredentials()
	}
	if err != nil {
		return SignIn{}, fromStore(err, "authorization request")
	}
	created := CreatedSession{User: userFromRecord(u), Session: sessionFromRecord(session), Secret: token}
	return SignIn{Authorization: auth, CreatedSession: created}, nil
}

// ResumeSignIn completes a stored authorization request for the session
// of sessionToken, started for it a moment before (a sign-in page that
// showed recovery codes between the second factor and the return to the
// client, since a code lives only AuthorizationCodeLifetime). The session
// must be valid (CodeUnauthenticated otherwise); the request as for
// CompleteSignIn, and so is its audit record (the method from the
// session's AMR).
func (p *Provider) ResumeSignIn(ctx context.Context, requestID, sessionToken string) (Authorization, error) {
	w := p.w
	v, err := w.VerifySession(ctx, sessionToken)
	if err != nil {
		return Authorization{}, err
	}
	var auth Authorization
	u := store.User{ID: v.User.ID, Username: v.User.Username}
	err = w.update(ctx, func(tx store.Tx) (err error) {
		auth, err = w.completeRequest(ctx, tx, requestID, u, v.Session, signInMethod(v.Session.AMR))
		return err
	})
	return auth, fromStore(err, "authorization request")
}

// completeRequest issues the code of a pending request for a session of
// the user u in tx, with login.succeeded and the audit record of the
// sign-in, whose method is method.
func (w *Workspace) completeRequest(ctx context.Context, tx store.Tx, requestID string, u store.User, s Session, method string) (Authorization, error) {
	now := w.svc.timestamp()
	rec, err := w.pendingRequest(tx, requestID, now)
	if err != nil {
		return Authorization{}, err
	}
	code, err := w.issueCode(tx, rec, s, now)
	if err != nil {
		return Authorization{}, err
	}
	if err := w.auditSignedIn(ctx, tx, u, signInChanges(method, rec.ClientID, s.ID)); err != nil {
		return Authorization{}, err
	}
	err = w.emit(tx, EventLoginSucceeded, loginSucceededEvent{UserID: s.UserID, ClientID: rec.ClientID, SessionID: s.ID})
	return Authorization{Code: code, RedirectURI: rec.RedirectURI, State: rec.State}, err
}
