package identity

import (
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// singleUse is a kind of single-use token: the link of a verification
// email, the link of a password reset email, or the challenge of a
// sign-in waiting for its second factor. Every kind follows one rule:
// the token is prefix + id + secret (see newToken); only a hash of the
// secret is stored, as a store.VerificationToken of the kind's purpose
// naming its user and the user's email when it was made; and it works
// once, before it expires, for that user, as the kind's userCheck allows.
// A token of another kind, or of another workspace, is unknown.
type singleUse struct {
	prefix  string
	purpose store.TokenPurpose
	// invalid is the error of a token that is malformed, unknown, of
	// another kind or whose secret is wrong, and of one whose user is gone.
	invalid func() *Error
	// used and expired are the messages of CodeTokenUsed and
	// CodeTokenExpired.
	used, expired string
	// userCheck refuses a token its user may not use now (a user disabled
	// since, an address changed since), or returns nil.
	userCheck func(u store.User, t store.VerificationToken) error
	// noUser lets a token name no user (UserID 0): a passkey sign-in that
	// does not know its user until the authenticator answers. Such a
	// token's check returns the zero user.
	noUser bool
	// variants are further purposes a token of the kind may be stored
	// with, which say more of it (what a sign-in proved before it was
	// asked for a passkey); issue one with withPurpose.
	variants []store.TokenPurpose
}

// accepts reports whether a token stored with purpose p is of the kind.
func (k singleUse) accepts(p store.TokenPurpose) bool {
	return p == k.purpose || slices.Contains(k.variants, p)
}

// withPurpose returns the kind issuing tokens of its variant p.
func (k singleUse) withPurpose(p store.TokenPurpose) singleUse {
	k.purpose = p
	return k
}

// The kinds of single-use token.
var (
	// emailVerification is the token of a verification email's link
	// (ConfirmEmail). It works for a disabled user too, and only while
	// the address it was sent to is still the user's email.
	emailVerification = singleUse{
		prefix: verificationPrefix, purpose: store.PurposeVerifyEmail, invalid: errTokenInvalid,
		used: "the verification token was used already", expired: "the verification token has expired",
		userCheck: func(u store.User, t store.VerificationToken) error {
			if u.Email != t.Email {
				return errorf(CodeTokenInvalid, "the verification token was sent to an address that is no longer the user's email")
			}
			return nil
		},
	}
	// passwordReset is the token of a password reset email's link
	// (ResetPassword): for an enabled user who still has the address it
	// was sent to.
	passwordReset = singleUse{
		prefix: resetPrefix, purpose: store.PurposePasswordReset, invalid: errResetTokenInvalid,
		used: "the password reset token was used already", expired: "the password reset token has expired",
		userCheck: func(u store.User, t store.VerificationToken) error {
			if !u.Enabled || u.Email != t.Email {
				return errResetTokenInvalid()
			}
			return nil
		},
	}
	// secondFactorChallenge is the challenge of a sign-in that passed its
	// password (VerifySecondFactor): a user disabled since is refused as
	// a failed sign-in is.
	secondFactorChallenge = singleUse{
		prefix: challengePrefix, purpose: store.PurposeSecondFactor, invalid: errChallengeInvalid,
		used: "this sign-in was completed already", expired: "this sign-in has expired: sign in again",
		userCheck: func(u store.User, _ store.VerificationToken) error {
			if !u.Enabled {
				return errInvalidCredentials()
			}
			return nil
		},
	}
)

// parse splits a token of the kind into its id and secret, or returns the
// kind's invalid error for anything malformed.
func (k singleUse) parse(token string) (id, secret string, err error) {
	id, secret, ok := parseToken(k.prefix, token)
	if !ok {
		return "", "", k.invalid()
	}
	return id, secret, nil
}

// issueSingleUse stores a new token of the kind for the user, valid for
// lifetime from now, and returns it: shown only to whom it is for.
func (w *Workspace) issueSingleUse(tx store.Tx, k singleUse, u store.User, now time.Time, lifetime time.Duration) (string, error) {
	token, _, err := w.issueSingleUseSecret(tx, k, u, now, lifetime)
	return token, err
}

// issueSingleUseSecret is issueSingleUse that returns the token's secret
// too, for a kind that derives a value of it (a passkey challenge).
func (w *Workspace) issueSingleUseSecret(tx store.Tx, k singleUse, u store.User, now time.Time, lifetime time.Duration) (token, secret string, err error) {
	id, secret, token, err := newToken(k.prefix)
	if err != nil {
		return "", "", internal(err)
	}
	err = tx.PutVerificationToken(w.slug, store.VerificationToken{
		ID: id, UserID: u.ID, Email: u.Email, SecretHash: hashSecret(secret),
		Purpose: k.purpose, CreatedAt: now, ExpiresAt: now.Add(lifetime),
	})
	return token, secret, err
}

// checkSingleUse returns the token of the kind with the id, and its user,
// if the secret matches and the token may be used at now; otherwise the
// error the kind reports: its invalid error, CodeTokenUsed,
// CodeTokenExpired, or its userCheck's.
func (w *Workspace) checkSingleUse(tx store.Tx, k singleUse, id, secret string, now time.Time) (store.VerificationToken, store.User, error) {
	t, err := tx.VerificationToken(w.slug, id)
	switch {
	case isNotFound(err) || err == nil && (!k.accepts(t.Purpose) || !secretMatches(secret, t.SecretHash)):
		return t, store.User{}, k.invalid()
	case err != nil:
		return t, store.User{}, err
	case !t.UsedAt.IsZero():
		return t, store.User{}, errorf(CodeTokenUsed, "%s", k.used)
	case !now.Before(t.ExpiresAt):
		return t, store.User{}, errorf(CodeTokenExpired, "%s", k.expired)
	}
	if k.noUser && t.UserID == 0 {
		return t, store.User{}, nil
	}
	u, err := w.user(tx, t.UserID)
	switch {
	case ErrorCode(err) == CodeNotFound:
		return t, u, k.invalid()
	case err != nil:
		return t, u, err
	}
	return t, u, k.userCheck(u, t)
}

// useSingleUse marks a token that checkSingleUse accepted as used at now.
func (w *Workspace) useSingleUse(tx store.Tx, t store.VerificationToken, now time.Time) error {
	t.UsedAt = now
	return tx.PutVerificationToken(w.slug, t)
}
