package identity

import (
	"context"
	"time"

	"github.com/identitylib/identity/store"
)

// Account setup: a single-use link that lets its holder choose the
// password (and the email and full name) of an account an administrator
// created for them, such as an operator of the console. It follows the
// rule of every single-use token (singleuse.go), as a password reset
// does, but is handed over by the administrator instead of mailed.

// AccountSetupLifetime is how long an account setup token works.
const AccountSetupLifetime = time.Hour

// setupPrefix starts every account setup token.
const setupPrefix = "idas_"

// The purposes of account setup tokens: one lets its holder choose the
// password, the other the username too.
const (
	purposeAccountSetup         store.TokenPurpose = "account_setup"
	purposeAccountSetupUsername store.TokenPurpose = "account_setup_username"
)

// accountSetup is the token of an account setup link: it works for a
// disabled user too, since completing the setup enables the account.
// accountSetupUsername is the same with the username to choose.
var (
	accountSetup = singleUse{
		prefix: setupPrefix, purpose: purposeAccountSetup, invalid: errSetupTokenInvalid,
		used: "the account setup link was used already", expired: "the account setup link has expired",
		userCheck: func(store.User, store.VerificationToken) error { return nil },
	}
	accountSetupUsername = func() singleUse {
		k := accountSetup
		k.purpose = purposeAccountSetupUsername
		return k
	}()
)

// setupKind returns the kind of the account setup token with the id: the
// one whose purpose it has (an unknown token is checked as accountSetup,
// which finds it unknown).
func (w *Workspace) setupKind(tx store.Tx, id string) (singleUse, error) {
	t, err := tx.VerificationToken(w.slug, id)
	switch {
	case err == nil && t.Purpose == purposeAccountSetupUsername:
		return accountSetupUsername, nil
	case err == nil || isNotFound(err):
		return accountSetup, nil
	}
	return singleUse{}, err
}

// checkSetup checks an account setup token in tx, as checkSingleUse does,
// whichever its kind; chooseUsername reports the kind.
func (w *Workspace) checkSetup(tx store.Tx, id, secret string) (t store.VerificationToken, u store.User, chooseUsername bool, err error) {
	k, err := w.setupKind(tx, id)
	if err != nil {
		return t, u, false, err
	}
	t, u, err = w.checkSingleUse(tx, k, id, secret, w.svc.timestamp())
	return t, u, k.purpose == purposeAccountSetupUsername, err
}

func errSetupTokenInvalid() *Error { return errorf(CodeTokenInvalid, "invalid account setup link") }

// setupReason is the reason of the audit records of an account setup.
const setupReason = "account_setup"

// AccountSetup is an account setup token just issued.
type AccountSetup struct {
	// Token is shown only here: only a hash of it is stored. The program
	// puts it in a link to its setup page.
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// AccountSetupOptions are the optional parts of CreateAccountSetup.
type AccountSetupOptions struct {
	// ChooseUsername lets the holder choose the username too (see
	// AccountSetupInput.Username): for an account made with a
	// placeholder name, such as the first operator of a new server.
	ChooseUsername bool
}

// CreateAccountSetup issues an account setup token for the user, valid
// for AccountSetupLifetime and once (tokens issued before stay valid
// until they are used or expire). The audit trail records
// password.reset_requested with the reason account_setup. An unknown user
// is CodeNotFound.
func (w *Workspace) CreateAccountSetup(ctx context.Context, userID int64, opts *AccountSetupOptions) (AccountSetup, error) {
	kind := accountSetup
	if opts != nil && opts.ChooseUsername {
		kind = accountSetupUsername
	}
	var out AccountSetup
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		now := w.svc.timestamp()
		out.ExpiresAt = now.Add(AccountSetupLifetime)
		if out.Token, err = w.issueSingleUse(tx, kind, u, now, AccountSetupLifetime); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditPasswordResetRequested, target: userTarget(u), reason: setupReason})
	})
	if err != nil {
		return AccountSetup{}, fromStore(err, "user")
	}
	return out, nil
}

// PendingAccountSetup is an account setup token that can still be used.
type PendingAccountSetup struct {
	// User is the account the token sets up.
	User User
	// ChooseUsername says that the holder may choose the username too.
	ChooseUsername bool
}

// CheckAccountSetup returns the account of an account setup token that
// can still be used, so that a setup page can greet its holder and say a
// link is over before they type a password; it changes nothing. A
// malformed or unknown token (or one of a user since deleted) is
// CodeTokenInvalid, a used one CodeTokenUsed, an expired one
// CodeTokenExpired.
func (w *Workspace) CheckAccountSetup(ctx context.Context, token string) (PendingAccountSetup, error) {
	id, secret, err := accountSetup.parse(token)
	if err != nil {
		return PendingAccountSetup{}, err
	}
	var u store.User
	var choose bool
	err = w.view(ctx, func(tx store.Tx) (err error) {
		_, u, choose, err = w.checkSetup(tx, id, secret)
		return err
	})
	if err != nil {
		return PendingAccountSetup{}, fromStore(err, "account setup link")
	}
	return PendingAccountSetup{User: userFromRecord(u), ChooseUsername: choose}, nil
}

// AccountSetupInput is what the holder of an account setup token
// chooses.
type AccountSetupInput struct {
	// Username, when not empty and not the user's, replaces the username,
	// under the rules of NewUser, for a token issued with ChooseUsername;
	// any other token refuses it (CodeInvalid on "username").
	Username string
	// Email and FullName replace the user's when not empty, under the
	// rules of UserUpdate.
	Email    string
	FullName string
	// Password is required and follows the workspace's password policy.
	Password string
}

// CompleteAccountSetup uses an account setup token: in one transaction
// it sets the password, the username (when the token allows), the email
// and full name when given, enables the
// user, ends any lock, revokes the user's sessions and grants (whoever
// used the account before the setup is signed out) and marks the token
// used. The audit trail records password.set with the reason
// account_setup and the username, email and full name changed. Errors:
// those of CheckAccountSetup; CodeInvalid naming "username", "email",
// "fullName" or "password"; CodeConflict when the username or email is
// another user's.
func (w *Workspace) CompleteAccountSetup(ctx context.Context, token string, in AccountSetupInput) (User, error) {
	id, secret, err := accountSetup.parse(token)
	if err != nil {
		return User{}, err
	}
	check := func(tx store.Tx) (store.VerificationToken, store.User, error) {
		t, u, choose, err := w.checkSetup(tx, id, secret)
		if err != nil {
			return t, u, err
		}
		rename := in.Username != "" && in.Username != u.Username
		settings, err := w.settings(tx)
		if err != nil {
			return t, u, err
		}
		var p problems
		switch {
		case rename && !choose:
			p.add("username", RuleUnknown, "cannot be chosen with this link")
		case rename:
			checkUsername(&p, "username", in.Username)
		}
		if in.Email != "" {
			checkEmail(&p, "email", in.Email)
		}
		if in.FullName != "" {
			checkFullName(&p, "fullName", in.FullName)
		}
		if in.Password == "" {
			p.add("password", RuleRequired, "is required")
		} else {
			settings.PasswordPolicy.check(&p, in.Password, orText(in.Username, u.Username), orText(in.Email, u.Email))
		}
		if err := p.err("invalid account setup"); err != nil {
			return t, u, err
		}
		if rename || in.Email != "" {
			username := ""
			if rename {
				username = in.Username
			}
			if err := w.checkUnique(tx, u.ID, username, in.Email); err != nil {
				return t, u, err
			}
		}
		return t, u, nil
	}
	// Check before hashing: a bad token or password costs no hash.
	err = w.view(ctx, func(tx store.Tx) error { _, _, err := check(tx); return err })
	if err != nil {
		return User{}, fromStore(err, "account setup link")
	}
	encoded, err := w.svc.newPasswordHash(ctx, in.Password, nil)
	if err != nil {
		return User{}, err
	}
	var u store.User
	err = w.update(ctx, func(tx store.Tx) error {
		t, user, err := check(tx)
		if err != nil {
			return err
		}
		now := w.svc.timestamp()
		if err := w.useSingleUse(tx, t, now); err != nil {
			return err
		}
		changes := auditChanges{}
		if in.Username != "" && in.Username != user.Username {
			changes.set("username", user.Username, in.Username)
			user.Username = in.Username
		}
		if in.Email != "" && in.Email != user.Email {
			changes.set("email", user.Email, in.Email)
			user.Email, user.EmailVerified = in.Email, false
		}
		if in.FullName != "" && in.FullName != user.FullName {
			changes.set("fullName", user.FullName, in.FullName)
			user.FullName = in.FullName
		}
		if !user.Enabled {
			changes.set("enabled", false, true)
			user.Enabled = true
		}
		user.PasswordHash, user.UpdatedAt, user.Version = encoded, now, newVersion(user.Version)
		if err := tx.PutUser(w.slug, user); err != nil {
			return err
		}
		u = user
		return w.passwordReplaced(ctx, tx, user, setupReason, now, func(int) auditEntry {
			return auditEntry{action: AuditPasswordSet, target: userTarget(user), reason: setupReason, changes: changes}
		})
	})
	if err != nil {
		return User{}, fromStore(err, "account setup link")
	}
	w.forgetSignInFailures(ctx, u.Username, u.Email)
	return userFromRecord(u), nil
}

// orText returns s, or fallback when s is empty.
func orText(s, fallback string) string {
	if s != "" {
		return s
	}
	return fallback
}
