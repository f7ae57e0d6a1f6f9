package store

import (
	"errors"
	"fmt"
)

// The argument checks of the front. The generated method M of guarded or
// bulkGuarded (guard.go) calls checkM with M's arguments after the
// lifecycle check and returns its error without reaching the store, so
// that every store may count on what Tx and Bulk say the front
// guarantees. genguard refuses a check function that names no method or
// whose parameters are not the method's.

// checkPutWebhook refuses an endpoint id that NextID cannot have handed
// out.
func checkPutWebhook(_ string, w Webhook) error {
	if w.ID < 1 {
		return fmt.Errorf("store: webhook id %d; ids are positive (NextID)", w.ID)
	}
	return nil
}

// checkPutRole refuses a role id that NextID cannot have handed out.
func checkPutRole(_ string, r Role) error {
	if r.ID < 1 {
		return fmt.Errorf("store: role id %d; ids are positive (NextID)", r.ID)
	}
	return nil
}

// checkPutGroup refuses a group id that NextID cannot have handed out.
func checkPutGroup(_ string, g Group) error {
	if g.ID < 1 {
		return fmt.Errorf("store: group id %d; ids are positive (NextID)", g.ID)
	}
	return nil
}

// checkPutOAuthClient refuses the empty id, a key not every store can
// hold.
func checkPutOAuthClient(_ string, c OAuthClient) error {
	if c.ID == "" {
		return errors.New("store: the OAuth client id is empty")
	}
	return nil
}

// checkPutSigningKey refuses the empty id.
func checkPutSigningKey(_ string, k SigningKey) error {
	if k.ID == "" {
		return errors.New("store: the signing key id is empty")
	}
	return nil
}

// checkPutAuthRequest refuses the empty id.
func checkPutAuthRequest(_ string, r AuthRequest) error {
	if r.ID == "" {
		return errors.New("store: the authorization request id is empty")
	}
	return nil
}

// checkPutGrant refuses the empty id.
func checkPutGrant(_ string, g Grant) error {
	if g.ID == "" {
		return errors.New("store: the grant id is empty")
	}
	return nil
}

// checkPutRefreshToken refuses the empty id and a token of no grant,
// which no grant's revocation or deletion would reach.
func checkPutRefreshToken(_ string, t RefreshToken) error {
	if t.ID == "" {
		return errors.New("store: the refresh token id is empty")
	}
	if t.GrantID == "" {
		return fmt.Errorf("store: refresh token %q names no grant (GrantID is empty)", t.ID)
	}
	return nil
}

// checkPutLoginAttempts refuses a user id that no user has.
func checkPutLoginAttempts(_ string, a LoginAttempts) error {
	if a.UserID < 1 {
		return fmt.Errorf("store: login attempts of user %d; user ids are positive", a.UserID)
	}
	return nil
}

// checkPutSecondFactor refuses a user id that no user has.
func checkPutSecondFactor(_ string, f SecondFactor) error {
	if f.UserID < 1 {
		return fmt.Errorf("store: second factor of user %d; user ids are positive", f.UserID)
	}
	return nil
}

// checkPutPasskey refuses the empty id and a user id that no user has.
func checkPutPasskey(_ string, p Passkey) error {
	if p.ID == "" {
		return errors.New("store: the passkey id is empty")
	}
	if p.UserID < 1 {
		return fmt.Errorf("store: passkey %q of user %d; user ids are positive", p.ID, p.UserID)
	}
	return nil
}

// checkPutPasskeyHandle refuses a user id that no user has and the empty
// handle.
func checkPutPasskeyHandle(_ string, h PasskeyHandle) error {
	if h.UserID < 1 {
		return fmt.Errorf("store: passkey handle of user %d; user ids are positive", h.UserID)
	}
	if len(h.Handle) == 0 {
		return fmt.Errorf("store: the passkey handle of user %d is empty", h.UserID)
	}
	return nil
}

// checkPutDelivery refuses a job that is not well-formed: a store tells
// mail jobs from webhook jobs by EndpointID 0 and indexes mail jobs by
// their user.
func checkPutDelivery(_ string, d Delivery) error {
	switch {
	case d.Kind == JobMail && d.EndpointID != 0:
		return fmt.Errorf("store: mail job %d names endpoint %d; a mail job has EndpointID 0", d.ID, d.EndpointID)
	case d.Kind == JobWebhook && d.EndpointID < 1:
		return fmt.Errorf("store: webhook job %d names endpoint %d; endpoint ids are positive", d.ID, d.EndpointID)
	case d.Kind == JobWebhook && d.UserID != 0:
		return fmt.Errorf("store: webhook job %d names user %d; a webhook job has UserID 0", d.ID, d.UserID)
	case d.UserID < 0:
		return fmt.Errorf("store: mail job %d names user %d; user ids are positive, 0 for none", d.ID, d.UserID)
	case d.Kind != JobWebhook && d.Kind != JobMail:
		return fmt.Errorf("store: job %d has kind %q, want %q or %q", d.ID, d.Kind, JobWebhook, JobMail)
	}
	return nil
}

// checkInsertUsers refuses a second factor that is not its user's, or of
// a user id no user has, as checkPutSecondFactor does one by one.
func checkInsertUsers(_ string, users []UserInsert) error {
	for _, u := range users {
		if f := u.SecondFactor; f != nil && (f.UserID != u.User.ID || f.UserID < 1) {
			return fmt.Errorf("store: second factor of user %d comes with user %d; it must be that user's, and user ids are positive", f.UserID, u.User.ID)
		}
	}
	return nil
}

// checkPutAuditRecord refuses the empty id, a key no store can order.
func checkPutAuditRecord(_ string, r AuditRecord) error {
	if r.ID == "" {
		return errors.New("store: the audit record id is empty")
	}
	return nil
}
