package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"time"

	"github.com/identitylib/identity/store"
)

// WebhookRequest is what one attempt of a webhook job sends: the stored
// body, signed with the endpoint's secret (Standard Webhooks).
type WebhookRequest struct {
	URL    string
	Secret string
	// EventID is the webhook-id header: the event's id, the same on every
	// attempt and for every endpoint the event fans out to.
	EventID string
	// Timestamp is the webhook-timestamp header: the attempt's time.
	Timestamp time.Time
	Body      []byte
}

// MailKind is what an email the library sends is for.
type MailKind string

// The kinds of email.
const (
	// MailVerifyEmail asks the user to confirm their address.
	MailVerifyEmail MailKind = "verify_email"
	// MailPasswordReset carries a link to choose a new password.
	MailPasswordReset MailKind = "password_reset"
)

// VerificationMail is what one attempt of a mail job sends: an email
// holding a link with a single-use token made for this attempt, a
// verification email or a password reset email (Kind), or a test email
// without a link.
type VerificationMail struct {
	// Kind says which email this is.
	Kind MailKind
	// Server is the workspace's SMTP server as its settings say at the
	// attempt, TLS resolved (never empty).
	Server SMTPSettings
	From   mail.Address
	To     mail.Address
	// Link is the link template (the workspace's VerifyURL or the hosted
	// verification page, or the reset link the job was queued with) with
	// this attempt's token; empty for a test email (MailTest).
	Link string
	// Lifetime is how long the token stays valid; 0 for a test email.
	Lifetime time.Duration
	// Date is the attempt's time.
	Date time.Time
	// Locale is the language tag of the request that asked for the email
	// when it was the user's own (RequestInfo.Locale); empty otherwise.
	Locale string
	// Workspace is the workspace's name for people (Branding.Name), and
	// Accent its accent colour (Branding.Accent).
	Workspace string
	Accent    string
	// Logo is the workspace's logo, when it has one.
	Logo *Logo
}

// Attempt is what Begin prepared for one attempt of a leased job.
type Attempt struct {
	// At is the Service-clock time of the attempt (the webhook-timestamp,
	// the email's Date); Record takes it back in Result.At.
	At time.Time
	// Webhook is set for a webhook job.
	Webhook *WebhookRequest
	// Mail is set for a mail job that is still worth sending.
	Mail *VerificationMail
	// Drop, when set, is why a mail job fails at once without being sent
	// (nothing retrying could change): the caller records it as a
	// permanent failure without sending anything.
	Drop error
}

// The reasons a mail job is dropped unsent.
var (
	errSMTPNotConfigured = errors.New("SMTP is not configured in the workspace any more")
	errEmailChanged      = errors.New("email changed: only the newest address gets mail")
	errEmailVerified     = errors.New("email verified already")
	errEmailJobUnknown   = errors.New("unreadable email job")
	errNoSuchAddress     = errors.New("no enabled user has this address")
	errNoVerifyLink      = errors.New("no verification link: the workspace has no smtp.verifyUrl and the Service no IssuerBase")
)

// Begin prepares an attempt of a job leased to owner. It returns
// ErrLeaseLost, and the caller sends nothing, when the job is gone, no
// longer pending, or leased to another owner.
//
// A caller that must be able to stop an attempt when its endpoint is
// deleted registers the attempt before it calls Begin (see
// QueueWatcher.EndpointDeleted).
//
// For a mail job Begin checks, in one transaction with the lease, that the
// job is still worth sending, and stores a new verification token valid
// from now for the workspace's token lifetime, of which only the hash is
// kept: the token goes into this attempt's email alone, so the token of
// an attempt that failed before the server took the email is useless to
// anyone. A job is dropped (Attempt.Drop) when the workspace's SMTP
// settings are gone or invalid, the user is gone, its email has changed
// since the job was queued, or is verified already.
func (q *Queue) Begin(ctx context.Context, owner string, job Job) (Attempt, error) {
	if job.Kind == MailJob {
		return q.beginMail(ctx, owner, job)
	}
	var cur store.Delivery
	err := q.svc.store.View(ctx, func(tx store.Tx) (err error) {
		cur, err = tx.Delivery(job.Workspace, job.ID)
		return err
	})
	switch {
	case isNotFound(err):
		return Attempt{}, ErrLeaseLost
	case err != nil:
		return Attempt{}, fromStore(err, "delivery queue")
	case !leasedTo(cur, owner):
		return Attempt{}, ErrLeaseLost
	case ctx.Err() != nil:
		return Attempt{}, ctx.Err() // cancelled: the endpoint may be gone
	}
	at := q.svc.timestamp()
	return Attempt{At: at, Webhook: &WebhookRequest{
		URL: job.url, Secret: job.secret, EventID: job.eventID, Timestamp: at, Body: job.payload,
	}}, nil
}

func leasedTo(d store.Delivery, owner string) bool {
	return d.Status == store.DeliveryPending && d.LeaseOwner == owner
}

func (q *Queue) beginMail(ctx context.Context, owner string, job Job) (Attempt, error) {
	w := &Workspace{svc: q.svc, slug: job.Workspace}
	at := q.svc.timestamp()
	var (
		m     mailToSend
		drop  error
		token string
	)
	err := q.svc.store.Update(ctx, func(tx store.Tx) (err error) {
		m, drop, err = w.mailToSend(tx, owner, job.ID)
		if err != nil || drop != nil {
			return err
		}
		kind, lifetime := emailVerification, m.server.tokenLifetime()
		if m.job.Kind == MailPasswordReset {
			kind, lifetime = passwordReset, PasswordResetTokenLifetime
		}
		if a, err := tx.Asset(w.slug, workspaceLogo); err == nil {
			logo := logoFromAsset(a)
			m.logo = &logo
		} else if !isNotFound(err) {
			return err
		}
		if m.job.Kind == MailTest {
			return nil // no link, no token
		}
		m.lifetime = lifetime
		token, err = w.issueSingleUse(tx, kind, m.user, at, lifetime)
		return err
	})
	switch {
	case errors.Is(err, ErrLeaseLost):
		return Attempt{}, err
	case err != nil:
		return Attempt{}, fromStore(err, "delivery queue")
	case drop != nil:
		return Attempt{At: at, Drop: drop}, nil
	}
	server := m.server
	server.TLS = server.mode()
	return Attempt{At: at, Mail: &VerificationMail{
		Kind:      m.job.Kind,
		Server:    server,
		From:      mail.Address{Name: server.FromName, Address: server.From},
		To:        mail.Address{Name: m.user.FullName, Address: m.user.Email},
		Link:      w.mailLink(m, token),
		Lifetime:  m.lifetime,
		Date:      at,
		Locale:    m.job.Locale,
		Workspace: m.branding.Name(w.slug),
		Accent:    m.branding.Accent(),
		Logo:      m.logo,
	}}, nil
}

// mailLink is the link of a mail job with the token in place: a reset's
// own; the workspace's VerifyURL; or else the hosted verification page,
// which goes on with the authorization request that asked for the email,
// if one did. A test email has none.
func (w *Workspace) mailLink(m mailToSend, token string) string {
	var link string
	switch {
	case m.job.Kind == MailTest:
		return ""
	case m.job.Kind == MailPasswordReset:
		link = m.job.Link
	case m.server.VerifyURL != "":
		link = m.server.VerifyURL
	default:
		link = w.Issuer() + "/verify?token=" + verifyURLPlaceholder
		if m.job.Request != "" {
			link += "&request=" + url.QueryEscape(m.job.Request)
		}
	}
	return fillLink(link, token)
}

// mailToSend is a leased mail job worth sending, with what it goes to.
type mailToSend struct {
	job      emailJob
	server   SMTPSettings
	branding Branding
	logo     *Logo
	user     store.User
	lifetime time.Duration
}

// mailToSend reads a leased mail job and what it goes to: the server and
// the user, or the reason to drop it.
func (w *Workspace) mailToSend(tx store.Tx, owner string, id int64) (m mailToSend, drop, err error) {
	cur, err := tx.Delivery(w.slug, id)
	if isNotFound(err) || err == nil && !leasedTo(cur, owner) {
		return m, nil, ErrLeaseLost
	} else if err != nil {
		return m, nil, err
	}
	if json.Unmarshal(cur.Payload, &m.job) != nil || m.job.Kind != MailVerifyEmail && m.job.Kind != MailPasswordReset && m.job.Kind != MailTest {
		return m, errEmailJobUnknown, nil
	}
	settings, err := w.settings(tx)
	if err != nil {
		return m, nil, err
	}
	if settings.SMTP == nil {
		return m, errSMTPNotConfigured, nil
	}
	m.server, m.branding = *settings.SMTP, settings.Branding
	if err := settings.validate(); err != nil {
		return m, fmt.Errorf("the workspace's SMTP settings are invalid: %w", err), nil
	}
	switch m.job.Kind {
	case MailPasswordReset:
		return w.resetMailTo(tx, m)
	case MailTest:
		m.user = store.User{Email: m.job.Email}
		return m, nil, nil
	}
	if m.server.VerifyURL == "" && w.svc.issuerBase == "" {
		return m, errNoVerifyLink, nil
	}
	m.user, err = tx.User(w.slug, m.job.UserID)
	switch {
	case isNotFound(err):
		return m, fmt.Errorf("user %d not found", m.job.UserID), nil
	case err != nil:
		return m, nil, err
	case m.user.Email != m.job.Email:
		return m, errEmailChanged, nil
	case m.user.EmailVerified:
		return m, errEmailVerified, nil
	}
	return m, nil, nil
}

// resetMailTo finds the user a password reset email goes to: the enabled
// user whose email is the address asked for. None is a drop, recorded on
// the job (which only administrators see), never told to the asker.
func (w *Workspace) resetMailTo(tx store.Tx, m mailToSend) (mailToSend, error, error) {
	uid, err := tx.UserIDByEmail(w.slug, m.job.Email)
	if isNotFound(err) {
		return m, errNoSuchAddress, nil
	} else if err != nil {
		return m, nil, err
	}
	if m.user, err = tx.User(w.slug, uid); err != nil {
		return m, nil, err
	}
	if !m.user.Enabled {
		return m, errNoSuchAddress, nil
	}
	return m, nil, nil
}
