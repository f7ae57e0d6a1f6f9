package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/identitylib/identity/store"
)

// ImportedUser is one user of an ImportUsers batch: a user migrated from
// another system, with its password already hashed there.
type ImportedUser struct {
	// Username, Email and FullName follow the rules of NewUser.
	Username string
	Email    string
	FullName string
	// PasswordHash is the user's hash in one of the encodings the library
	// verifies: argon2id (PHC string), bcrypt ($2a$, $2b$, $2y$, cost at
	// most 16), PBKDF2 in PHC or passlib form ($pbkdf2-sha256$...) or in
	// Django's form (pbkdf2_sha256$...). Empty means the user has no
	// password and cannot authenticate with one. A hash that is not
	// argon2id at the current parameters is replaced at the user's first
	// successful login.
	PasswordHash  string
	EmailVerified bool
	// Disabled imports the user disabled.
	Disabled   bool
	MFAEnabled bool
	// CreatedAt keeps the original creation time; zero means now.
	CreatedAt time.Time
	// Attributes follow the rules of SetAttribute.
	Attributes map[string]string
	// Roles are directly assigned role ids, each positive.
	Roles []int64
}

// ImportUsers creates a batch of up to MaxImportBatch users in one
// transaction: either all of them are created or, on any error, none. A
// validation problem is a CodeInvalid error and a username or email taken
// (in the workspace or twice in the batch, ignoring case) is a CodeConflict
// error; in both, Fields names every problem as "users[i].field". The
// created users are returned in batch order with their new ids.
func (w *Workspace) ImportUsers(ctx context.Context, batch []ImportedUser) ([]User, error) {
	if err := validateImport(batch); err != nil {
		return nil, err
	}
	now := w.svc.timestamp()
	var created []store.User
	err := w.update(ctx, func(tx store.Tx) error {
		created = created[:0]
		if err := w.checkImportUnique(tx, batch); err != nil {
			return err
		}
		for _, iu := range batch {
			rec, err := w.importOne(tx, iu, now)
			if err != nil {
				return err
			}
			created = append(created, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	out := make([]User, len(created))
	for i, r := range created {
		out[i] = userFromRecord(r)
	}
	return out, nil
}

func validateImport(batch []ImportedUser) error {
	var p problems
	if len(batch) > MaxImportBatch {
		p.add("users", RuleMaxLength, "a batch holds at most %d users", MaxImportBatch)
		return p.err("invalid import")
	}
	for i, iu := range batch {
		field := func(name string) string { return fmt.Sprintf("users[%d].%s", i, name) }
		checkUsername(&p, field("username"), iu.Username)
		checkEmail(&p, field("email"), iu.Email)
		checkFullName(&p, field("fullName"), iu.FullName)
		if iu.PasswordHash != "" {
			if _, err := parsePasswordHash(iu.PasswordHash); err != nil {
				p.add(field("passwordHash"), RuleFormat, "%v", err)
			}
		}
		for key, value := range iu.Attributes {
			checkAttributeKey(&p, field("attributes"), key)
			checkAttributeValue(&p, field("attributes."+key), value)
		}
		for j, role := range iu.Roles {
			if role <= 0 {
				p.add(field(fmt.Sprintf("roles[%d]", j)), RuleRange, "must be a positive role id")
			}
		}
	}
	return p.err("invalid import")
}

// checkImportUnique reports every username and email that is taken in the
// workspace or appears twice in the batch, ignoring case.
func (w *Workspace) checkImportUnique(tx store.Tx, batch []ImportedUser) error {
	var p problems
	usernames, emails := map[string]int{}, map[string]int{}
	for i, iu := range batch {
		for _, f := range []struct {
			name, value string
			seen        map[string]int
			lookup      func(string, string) (int64, error)
		}{
			{"username", iu.Username, usernames, tx.UserIDByUsername},
			{"email", iu.Email, emails, tx.UserIDByEmail},
		} {
			field := fmt.Sprintf("users[%d].%s", i, f.name)
			folded := store.Fold(f.value)
			if first, dup := f.seen[folded]; dup {
				p.add(field, RuleDuplicate, "is the same as users[%d].%s", first, f.name)
				continue
			}
			f.seen[folded] = i
			_, err := f.lookup(w.slug, f.value)
			switch {
			case err == nil:
				p.add(field, RuleTaken, "is already in use")
			case !isNotFound(err):
				return err
			}
		}
	}
	if len(p) > 0 {
		return &Error{Code: CodeConflict, Message: "usernames or emails of the batch are already in use", Fields: p}
	}
	return nil
}

func (w *Workspace) importOne(tx store.Tx, iu ImportedUser, now time.Time) (store.User, error) {
	id, err := tx.NextID(w.slug, store.SeqUsers)
	if err != nil {
		return store.User{}, err
	}
	createdAt := now
	if !iu.CreatedAt.IsZero() {
		createdAt = iu.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	rec := store.User{
		ID: id, Username: iu.Username, Email: iu.Email, FullName: iu.FullName,
		EmailVerified: iu.EmailVerified, Enabled: !iu.Disabled, MFAEnabled: iu.MFAEnabled,
		PasswordHash: iu.PasswordHash, CreatedAt: createdAt, UpdatedAt: now, Version: newVersion(0),
	}
	if err := tx.PutUser(w.slug, rec); err != nil {
		return store.User{}, err
	}
	for key, value := range iu.Attributes {
		if err := tx.PutUserAttribute(w.slug, id, key, value); err != nil {
			return store.User{}, err
		}
	}
	for _, role := range iu.Roles {
		if err := tx.AddUserRole(w.slug, id, role); err != nil {
			return store.User{}, err
		}
	}
	return rec, nil
}
