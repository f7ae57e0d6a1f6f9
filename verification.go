package identity

import (
	"context"
	"encoding/json"

	"github.com/identitylib/identity/store"
)

// verificationPrefix starts every email verification token; see newToken
// for the rest.
const verificationPrefix = "idv_"

// EmailVerificationJob is the EventType of the deliveries that are
// verification emails (see ListEmailJobs). It is no event type: webhook
// endpoints cannot subscribe to it.
const EmailVerificationJob EventType = "email.verification"

// PasswordResetJob is the EventType of the deliveries that are password
// reset emails (see ListEmailJobs). Like EmailVerificationJob it is no event
// type.
const PasswordResetJob EventType = "email.password_reset"

// emailJob is the payload of an email job: what the dispatcher needs to
// send it. Never a token: the dispatcher makes one for each attempt.
type emailJob struct {
	Kind MailKind `json:"kind"`
	// UserID is the user a verification email is for; 0 for a password
	// reset, which names an address only (whose user, if any, is looked up
	// when the email is sent).
	UserID int64 `json:"userId,omitempty"`
	// Email is the address the job was queued for; if the user's email
	// has changed since, a verification job is dropped.
	Email string `json:"email"`
	// Link is the link template of a password reset email.
	Link string `json:"link,omitempty"`
	// Request is the authorization request whose sign-in asked for a
	// verification email: the hosted verification page offers to go on
	// with it.
	Request string `json:"request,omitempty"`
	// Locale is the language of the request that queued the job, when it
	// was the user's own (RequestInfo.Locale).
	Locale string `json:"locale,omitempty"`
}

// eventType is the EventType of the job's delivery.
func (j emailJob) eventType() EventType {
	switch j.Kind {
	case MailPasswordReset:
		return PasswordResetJob
	case MailTest:
		return TestEmailJob
	}
	return EmailVerificationJob
}

// queueVerificationEmail queues a verification email to the user's
// current address in tx, the transaction that created the user or
// changed its email, when the workspace has SMTP settings; without them it
// does nothing. Nothing is sent here: the dispatcher sends the email after
// the transaction commits, so the SMTP server's speed or health never
// touches the change itself.
func (w *Workspace) queueVerificationEmail(tx store.Tx, u store.User) error {
	settings, err := w.settings(tx)
	if err != nil || settings.SMTP == nil {
		return err
	}
	return w.enqueueEmailJob(tx, emailJob{Kind: MailVerifyEmail, UserID: u.ID, Email: u.Email})
}

// enqueueEmailJob records the job as a pending delivery without endpoint,
// due now.
func (w *Workspace) enqueueEmailJob(tx store.Tx, job emailJob) error {
	_, err := w.enqueueEmailJobID(tx, job)
	return err
}

// enqueueEmailJobID is enqueueEmailJob, returning the delivery's id.
func (w *Workspace) enqueueEmailJobID(tx store.Tx, job emailJob) (int64, error) {
	payload, err := json.Marshal(job)
	if err != nil {
		return 0, err
	}
	eventID, err := newEventID()
	if err != nil {
		return 0, err
	}
	// The user the job is about, so that DeleteUserPermanently finds it: a
	// verification email's, or the user who has a reset's address now.
	about := job.UserID
	if about == 0 {
		switch id, err := tx.UserIDByEmail(w.slug, job.Email); {
		case err == nil:
			about = id
		case !isNotFound(err):
			return 0, err
		}
	}
	id, err := tx.NextID(w.slug, store.SeqDeliveries)
	if err != nil {
		return 0, err
	}
	now := w.svc.timestamp()
	return id, tx.PutDelivery(w.slug, store.Delivery{
		ID: id, Kind: store.JobMail, UserID: about, EventID: eventID, EventType: string(job.eventType()),
		Payload: payload, CreatedAt: now, Status: store.DeliveryPending, NextAttemptAt: now,
	})
}

// SendVerificationEmail queues a new verification email to the user's
// current address, for a user whose link expired or got lost. Earlier
// links for the same address stay valid until they expire or one is
// used. An unknown user is a not-found error; a workspace without SMTP
// settings, or a user without an email or whose email is verified
// already, is a CodeConflict error. Under the workspace's ThrottlePolicy
// an address gets at most one verification email per MailInterval: a
// request sooner is CodeRateLimited (Error.RetryAfter says when another
// may go), and the email sent before still works. A queued email is
// recorded in the audit trail (email.verification_sent, with the
// address).
func (w *Workspace) SendVerificationEmail(ctx context.Context, userID int64) error {
	return w.sendVerificationEmail(ctx, userID, "")
}

// sendVerificationEmail is SendVerificationEmail for the sign-in of an
// authorization request, when requestID is set.
func (w *Workspace) sendVerificationEmail(ctx context.Context, userID int64, requestID string) error {
	var u store.User
	var settings Settings
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if u, err = w.user(tx, userID); err != nil {
			return err
		}
		settings, err = w.settings(tx)
		return err
	})
	if err != nil {
		return fromStore(err, "user")
	}
	if err := verificationWanted(w.slug, settings, u); err != nil {
		return err
	}
	retry, err := w.takeMail(ctx, settings.Throttle, MailVerifyEmail, u.Email)
	if err != nil {
		return err
	}
	if retry > 0 {
		return &Error{Code: CodeRateLimited, RetryAfter: retry,
			Message: "a verification email was sent moments ago, and its link works: another can follow in " + plural(minutesUp(retry), "minute")}
	}
	locale := RequestInfoFrom(ctx).Locale
	err = w.update(ctx, func(tx store.Tx) error {
		cur, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		settings, err := w.settings(tx)
		if err != nil {
			return err
		}
		if err := verificationWanted(w.slug, settings, cur); err != nil {
			return err
		}
		if err := w.enqueueEmailJob(tx, emailJob{Kind: MailVerifyEmail, UserID: cur.ID, Email: cur.Email, Request: requestID, Locale: locale}); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditVerificationSent, target: userTarget(cur),
			changes: auditChanges{}.set("email", nil, cur.Email)})
	})
	return fromStore(err, "user")
}

// verificationWanted reports why the user cannot get a verification
// email, or nil.
func verificationWanted(slug string, settings Settings, u store.User) error {
	switch {
	case settings.SMTP == nil:
		return errorf(CodeConflict, "workspace %q has no SMTP settings", slug)
	case u.Email == "":
		return errorf(CodeConflict, "user %d has no email", u.ID)
	case u.EmailVerified:
		return errorf(CodeConflict, "the email of user %d is verified already", u.ID)
	}
	return nil
}

// refuseUnverified is the answer to a right password of an unverified
// user under RequireVerifiedEmail: CodeEmailUnverified, after queuing a
// verification email (for the authorization request, when set) unless
// one went out within the mail interval or the workspace cannot send one.
func (w *Workspace) refuseUnverified(ctx context.Context, u store.User, settings Settings, requestID string) error {
	w.svc.signedIn(SignInEmailUnverified)
	refusal := &Error{Code: CodeEmailUnverified, Message: "the email address is not verified yet: open the link in the verification email, then sign in again"}
	if verificationWanted(w.slug, settings, u) != nil {
		refusal.Message = "the email address is not verified, and no verification email can be sent: ask an administrator"
		return refusal
	}
	switch err := w.sendVerificationEmail(ctx, u.ID, requestID); ErrorCode(err) {
	case "", CodeRateLimited, CodeConflict:
		// Sent, sent moments ago, or verified meanwhile (the next sign-in
		// goes through).
		return refusal
	default:
		return err
	}
}

// SetEmailVerified marks the user's email verified or not, for an
// administrator who checked the address another way (or who wants it
// checked again). It emits user.updated, and records
// user.email_verified or user.email_unverified, when it changes something
// and returns the user. An unknown user is CodeNotFound.
func (w *Workspace) SetEmailVerified(ctx context.Context, userID int64, verified bool) (User, error) {
	var u store.User
	err := w.update(ctx, func(tx store.Tx) (err error) {
		if u, err = w.user(tx, userID); err != nil {
			return err
		}
		if u.EmailVerified == verified {
			return nil
		}
		u.EmailVerified, u.UpdatedAt, u.Version = verified, w.svc.timestamp(), newVersion(u.Version)
		if err := tx.PutUser(w.slug, u); err != nil {
			return err
		}
		if err := w.auditEmailVerified(ctx, tx, u, nil); err != nil {
			return err
		}
		return w.emit(tx, EventUserUpdated, userFromRecord(u))
	})
	if err != nil {
		return User{}, fromStore(err, "user")
	}
	return userFromRecord(u), nil
}

// auditEmailVerified records in tx that the email of u became verified
// (user.email_verified) or not (user.email_unverified), as u now says,
// by actor (nil: the context's).
func (w *Workspace) auditEmailVerified(ctx context.Context, tx store.Tx, u store.User, actor *Actor) error {
	action := AuditUserEmailUnverified
	if u.EmailVerified {
		action = AuditUserEmailVerified
	}
	return w.audit(ctx, tx, auditEntry{action: action, target: userTarget(u), actor: actor,
		changes: auditChanges{}.set("emailVerified", !u.EmailVerified, u.EmailVerified)})
}

// ConfirmEmail checks an email verification token, the one in the link of
// a verification email, and marks the user's email verified: the token
// becomes used and EmailVerified true in one transaction, which emits
// user.updated. It returns the user after the change.
//
// A token works once, until its lifetime (SMTPSettings.TokenLifetime,
// default 24 h from sending) is over, and only while the address it was
// sent to is still the user's email. A malformed or unknown token, or one
// sent to an address the user no longer has, is a CodeTokenInvalid error;
// an expired one CodeTokenExpired; a used one CodeTokenUsed (the email
// stays verified). Test them with errors.Is and ErrTokenInvalid,
// ErrTokenExpired and ErrTokenUsed. A token of another workspace is
// unknown here. Confirming does not depend on the SMTP settings, which may
// have changed since sending, nor on the user being enabled. The audit
// trail records user.email_verified, the user its actor (the link proved
// the mailbox theirs), when the email was not verified yet.
func (w *Workspace) ConfirmEmail(ctx context.Context, token string) (User, error) {
	id, secret, err := emailVerification.parse(token)
	if err != nil {
		return User{}, err
	}
	now := w.svc.timestamp()
	// Refuse a bad token in a read, so that guessing costs no write.
	err = w.view(ctx, func(tx store.Tx) error {
		_, _, err := w.checkSingleUse(tx, emailVerification, id, secret, now)
		return err
	})
	if err != nil {
		return User{}, fromStore(err, "verification token")
	}
	var u store.User
	err = w.update(ctx, func(tx store.Tx) error {
		t, user, err := w.checkSingleUse(tx, emailVerification, id, secret, now)
		if err != nil {
			return err
		}
		u = user
		if err := w.useSingleUse(tx, t, now); err != nil {
			return err
		}
		if u.EmailVerified {
			return nil // verified already by another link to the same address
		}
		u.EmailVerified, u.UpdatedAt, u.Version = true, now, newVersion(u.Version)
		if err := tx.PutUser(w.slug, u); err != nil {
			return err
		}
		if err := w.auditEmailVerified(ctx, tx, u, userActor(u)); err != nil {
			return err
		}
		return w.emit(tx, EventUserUpdated, userFromRecord(u))
	})
	if err != nil {
		return User{}, fromStore(err, "verification token")
	}
	return userFromRecord(u), nil
}

func errTokenInvalid() *Error {
	return errorf(CodeTokenInvalid, "invalid verification token")
}

// ListEmailJobs returns one page of the workspace's email jobs, pending,
// succeeded and failed, in ascending id order, with their number in all
// (a nil page is the first DefaultPageLimit, as for ListDeliveries): a
// Delivery each, with EndpointID 0 and
// EventType EmailVerificationJob (UserID set), PasswordResetJob or
// TestEmailJob (UserID 0: they name an address, not a user); LastStatus
// is the SMTP reply code of the last attempt (250 on success, 0 when no
// reply came). Workspace.ListDeliveries, which lists an endpoint's deliveries,
// never includes them. RetryDelivery queues a failed one again.
func (w *Workspace) ListEmailJobs(ctx context.Context, page *Page) (List[Delivery], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[Delivery]{}, err
	}
	var recs []store.Delivery
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		if _, err := tx.Workspace(w.slug); err != nil {
			return err
		}
		recs, total, err = tx.MailJobsPage(w.slug, pg.Offset, pg.Limit)
		return err
	})
	if err != nil {
		return List[Delivery]{}, fromStore(err, "workspace")
	}
	return List[Delivery]{Items: mapAll(recs, deliveryFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}
