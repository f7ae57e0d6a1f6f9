package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
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

// VerificationMail is what one attempt of a mail job sends: a
// verification email holding a link with a token made for this attempt.
type VerificationMail struct {
	// Server is the workspace's SMTP server as its settings say at the
	// attempt, TLS resolved (never empty).
	Server SMTPSettings
	From   mail.Address
	To     mail.Address
	// Link is the workspace's VerifyURL with this attempt's token.
	Link string
	// Lifetime is how long the token stays valid.
	Lifetime time.Duration
	// Date is the attempt's time.
	Date time.Time
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
	id, secret, token, err := newToken(verificationPrefix)
	if err != nil {
		return Attempt{}, err
	}
	w := &Workspace{svc: q.svc, slug: job.Workspace}
	at := q.svc.timestamp()
	var (
		server SMTPSettings
		user   store.User
		drop   error
	)
	err = q.svc.store.Update(ctx, func(tx store.Tx) (err error) {
		server, user, drop, err = w.mailToSend(tx, owner, job.ID)
		if err != nil || drop != nil {
			return err
		}
		return tx.PutVerificationToken(job.Workspace, store.VerificationToken{
			ID: id, UserID: user.ID, Email: user.Email, SecretHash: hashSecret(secret),
			CreatedAt: at, ExpiresAt: at.Add(server.tokenLifetime()),
		})
	})
	switch {
	case errors.Is(err, ErrLeaseLost):
		return Attempt{}, err
	case err != nil:
		return Attempt{}, fromStore(err, "delivery queue")
	case drop != nil:
		return Attempt{At: at, Drop: drop}, nil
	}
	server.TLS = server.mode()
	return Attempt{At: at, Mail: &VerificationMail{
		Server:   server,
		From:     mail.Address{Name: server.FromName, Address: server.From},
		To:       mail.Address{Name: user.FullName, Address: user.Email},
		Link:     server.verifyLink(token),
		Lifetime: server.tokenLifetime(),
		Date:     at,
	}}, nil
}

// mailToSend reads a leased mail job and what it goes to: the server and
// the user, or the reason to drop it.
func (w *Workspace) mailToSend(tx store.Tx, owner string, id int64) (server SMTPSettings, user store.User, drop, err error) {
	cur, err := tx.Delivery(w.slug, id)
	if isNotFound(err) || err == nil && !leasedTo(cur, owner) {
		return server, user, nil, ErrLeaseLost
	} else if err != nil {
		return server, user, nil, err
	}
	var ej emailJob
	if json.Unmarshal(cur.Payload, &ej) != nil || ej.Kind != emailJobKindVerify {
		return server, user, errEmailJobUnknown, nil
	}
	settings, err := w.settings(tx)
	if err != nil {
		return server, user, nil, err
	}
	if settings.SMTP == nil {
		return server, user, errSMTPNotConfigured, nil
	}
	server = *settings.SMTP
	if err := settings.validate(); err != nil {
		return server, user, fmt.Errorf("the workspace's SMTP settings are invalid: %w", err), nil
	}
	user, err = tx.User(w.slug, ej.UserID)
	switch {
	case isNotFound(err):
		return server, user, fmt.Errorf("user %d not found", ej.UserID), nil
	case err != nil:
		return server, user, nil, err
	case user.Email != ej.Email:
		return server, user, errEmailChanged, nil
	case user.EmailVerified:
		return server, user, errEmailVerified, nil
	}
	return server, user, nil, nil
}
