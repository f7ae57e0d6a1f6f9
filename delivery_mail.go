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

// The LastError of email jobs dropped without sending: nothing retrying
// could change.
var (
	errSMTPNotConfigured = errors.New("SMTP is not configured in the workspace any more")
	errEmailChanged      = errors.New("email changed: only the newest address gets mail")
	errEmailVerified     = errors.New("email verified already")
	errEmailJobUnknown   = errors.New("unreadable email job")
)

// droppedError is the reason an email job fails at once, unsent.
type droppedError struct{ reason error }

func (e *droppedError) Error() string { return e.reason.Error() }

// errLeaseLost reports that an email job is gone or no longer leased to
// this dispatcher, so it must not be sent.
var errLeaseLost = errors.New("lease lost")

// endpointFor returns the endpoint of a delivery. An email job
// (store.NoEndpoint) has none: it gets an enabled stand-in without URL or
// secret, so that the queue treats a workspace's email jobs as one
// always-enabled endpoint (which MaxPerEndpoint caps) that is never
// failing or disabled.
func endpointFor(tx store.Tx, slug string, id int64) (store.Webhook, error) {
	if id == 0 {
		return store.Webhook{Enabled: true}, nil
	}
	return tx.Webhook(slug, id)
}

// isEmail reports whether the job is an email rather than a webhook
// request.
func (j deliveryJob) isEmail() bool { return j.delivery.Kind == store.JobMail }

// preparedMail is an email ready to go, with the server to send it
// through.
type preparedMail struct {
	server   SMTPSettings
	from, to string
	msg      []byte
}

// attemptMail makes one attempt of a leased email job: prepareMail makes
// a fresh token and the message, then sendMail hands it to the server. It
// reports false when nothing was attempted because the job was gone.
func (d *Dispatcher) attemptMail(ctx context.Context, job deliveryJob) (attemptResult, bool) {
	res := attemptResult{at: d.svc.timestamp()}
	started := time.Now()
	m, err := d.prepareMail(ctx, job, res.at)
	dropped, isDropped := errors.AsType[*droppedError](err)
	switch {
	case errors.Is(err, errLeaseLost):
		d.counts.dropped.Add(1)
		return attemptResult{}, false
	case isDropped:
		res.err, res.permanent = dropped.reason, true
	case err != nil:
		res.err = fmt.Errorf("preparing the email: %w", err) // retried
	default:
		d.counts.attempts.Add(1)
		var sent smtpResult
		sent, res.err = sendMail(ctx, m.server, d.cfg.roots, m.from, m.to, m.msg)
		res.resp.status, res.permanent = sent.code, sent.permanent
	}
	res.duration = time.Since(started)
	if errors.Is(res.err, errAttemptTimedOut) {
		res.err = fmt.Errorf("%w after %s", res.err, d.cfg.attemptTimeout)
	}
	return res, true
}

// prepareMail checks in one transaction that the job is still leased to
// this dispatcher and still worth sending, and stores a new verification
// token, valid from now for the workspace's token lifetime, of which only
// the hash is kept: the secret goes into this attempt's message alone, so
// a token of an attempt that failed before the server took the message
// is useless to anyone. It returns the message, or a *droppedError with
// the reason the job fails at once without sending: the workspace's SMTP
// settings are gone or invalid, the user is gone, its email has changed
// since the job was queued, or is verified already.
func (d *Dispatcher) prepareMail(ctx context.Context, job deliveryJob, now time.Time) (preparedMail, error) {
	id, secret, token, err := newToken(verificationPrefix)
	if err != nil {
		return preparedMail{}, err
	}
	w := &Workspace{svc: d.svc, slug: job.slug}
	var (
		server SMTPSettings
		user   store.User
		drop   error
	)
	err = d.svc.store.Update(ctx, func(tx store.Tx) error {
		drop = nil
		cur, err := tx.Delivery(job.slug, job.delivery.ID)
		if isNotFound(err) {
			return errLeaseLost
		} else if err != nil {
			return err
		}
		if cur.Status != store.DeliveryPending || cur.LeaseOwner != d.id {
			return errLeaseLost
		}
		var ej emailJob
		if json.Unmarshal(cur.Payload, &ej) != nil || ej.Kind != emailJobKindVerify {
			drop = errEmailJobUnknown
			return nil
		}
		settings, err := w.settings(tx)
		if err != nil {
			return err
		}
		if settings.SMTP == nil {
			drop = errSMTPNotConfigured
			return nil
		}
		server = *settings.SMTP
		if err := settings.validate(); err != nil {
			drop = fmt.Errorf("the workspace's SMTP settings are invalid: %w", err)
			return nil
		}
		user, err = tx.User(job.slug, ej.UserID)
		switch {
		case isNotFound(err):
			drop = fmt.Errorf("user %d not found", ej.UserID)
			return nil
		case err != nil:
			return err
		case user.Email != ej.Email:
			drop = errEmailChanged
			return nil
		case user.EmailVerified:
			drop = errEmailVerified
			return nil
		}
		return tx.PutVerificationToken(job.slug, store.VerificationToken{
			ID: id, UserID: user.ID, Email: user.Email, SecretHash: hashSecret(secret),
			CreatedAt: now, ExpiresAt: now.Add(server.tokenLifetime()),
		})
	})
	if err == nil && drop != nil {
		err = &droppedError{drop}
	}
	if err != nil {
		return preparedMail{}, err
	}
	messageID, err := newMessageID(server.From)
	if err != nil {
		return preparedMail{}, err
	}
	msg, err := verificationEmail{
		from:      mail.Address{Name: server.FromName, Address: server.From},
		to:        mail.Address{Name: user.FullName, Address: user.Email},
		link:      server.verifyLink(token),
		lifetime:  server.tokenLifetime(),
		date:      now,
		messageID: messageID,
	}.bytes()
	if err != nil {
		return preparedMail{}, err
	}
	return preparedMail{server: server, from: server.From, to: user.Email, msg: msg}, nil
}

// applyMailResult records an email attempt: succeeded once the server
// took the message; failed at once when the job was dropped or the
// server refused the recipient; else retried on the schedule of webhook
// deliveries (DeliveryOptions.Retries), and failed after the last retry.
// No endpoint state is involved.
func (d *Dispatcher) applyMailResult(tx store.Tx, slug string, cur store.Delivery, res attemptResult, now time.Time) (recordOutcome, error) {
	var out recordOutcome
	if res.err == nil {
		cur.Status, cur.NextAttemptAt = store.DeliverySucceeded, time.Time{}
	} else if delay, retry := d.nextDelay(cur.Attempts, res, now); retry && !res.permanent {
		cur.NextAttemptAt = now.Add(delay).Truncate(time.Microsecond)
		out.next = cur.NextAttemptAt
	} else {
		cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
		out.exhausted = 1
	}
	out.status = cur.Status
	return out, tx.PutDelivery(slug, cur)
}
