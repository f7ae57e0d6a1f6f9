package identity

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// User is a user of a workspace.
type User struct {
	// ID is a positive integer from the workspace's user sequence.
	ID int64 `json:"id"`
	// Username is unique in the workspace ignoring case; it cannot change.
	Username string `json:"username"`
	// Email is unique in the workspace ignoring case.
	Email    string `json:"email"`
	FullName string `json:"fullName"`
	// EmailVerified is false for a new user and after an email change.
	EmailVerified bool `json:"emailVerified"`
	// Enabled is false for a disabled user, who cannot authenticate.
	Enabled    bool      `json:"enabled"`
	MFAEnabled bool      `json:"mfaEnabled"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// Version changes on every write of the user (see Precondition); the
	// REST adapter serves it as the ETag, not in the JSON.
	Version int64 `json:"-"`
}

func userFromRecord(r store.User) User {
	return User{
		ID: r.ID, Username: r.Username, Email: r.Email, FullName: r.FullName,
		EmailVerified: r.EmailVerified, Enabled: r.Enabled, MFAEnabled: r.MFAEnabled,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version,
	}
}

// NewUser is the input of CreateUser. Every field but Idempotency is
// required.
type NewUser struct {
	// Username: 1-255 characters of [a-zA-Z0-9._-].
	Username string
	// Email: a plain address, at most 254 characters.
	Email string
	// FullName: 1-255 characters, not blank, no control characters.
	FullName string
	// Password: at least 4 characters and the workspace's PasswordPolicy.
	Password string
	// Idempotency, when not nil, makes the creation safe to retry: see
	// Idempotency.
	Idempotency *Idempotency
}

// UserUpdate is the input of UpdateUser: the fields that may change, and
// an optional condition on the user's current version.
type UserUpdate struct {
	Email    string
	FullName string
	// Precondition, when not nil, makes the update conditional, as
	// IfVersion(u.Version) does for a user u read before. A user that does
	// not exist is still CodeNotFound.
	Precondition *Precondition
}

// CreateUser creates an enabled user whose email is not yet verified, with
// the password hashed by argon2id. A taken username or email (ignoring
// case) is a CodeConflict error whose Fields say which. When the workspace
// has SMTP settings, a verification email is queued in the same
// transaction and sent by the dispatcher (see ConfirmEmail). With
// nu.Idempotency, a retry returns the first call's outcome (see
// Idempotency) and queues nothing.
//
// A taken username or email is refused before the password is hashed. The
// hash waits for room in the Service's hashing budget (see
// Options.PasswordHashingBudget); if ctx ends meanwhile, CreateUser
// returns ctx.Err() as it is and creates nothing.
func (w *Workspace) CreateUser(ctx context.Context, nu NewUser) (_ User, err error) {
	once, err := w.beginIdempotent(ctx, nu.Idempotency, opCreateUser)
	if err != nil {
		return User{}, err
	}
	if once.replaying() {
		var u User
		err = once.replay(&u, &u.Version)
		return u, err
	}
	defer once.finish(ctx, &err)
	settings, err := w.GetSettings(ctx)
	if err != nil {
		return User{}, err
	}
	if err := nu.validate(settings.PasswordPolicy); err != nil {
		return User{}, err
	}
	// A username or email already taken is refused without hashing: looked
	// up read-only now, so as not to wait for the hashing budget, and again
	// once the budget has room, in case a creation that came first took it
	// meanwhile. The writing transaction still decides.
	taken := func() error {
		return fromStore(w.view(ctx, func(tx store.Tx) error {
			return w.checkUnique(tx, 0, nu.Username, nu.Email)
		}), "user")
	}
	if err := taken(); err != nil {
		return User{}, err
	}
	// Hash outside the transaction: argon2id takes tens of milliseconds and
	// must not hold up other writers.
	hash, err := w.svc.newPasswordHash(ctx, nu.Password, taken)
	if err != nil {
		return User{}, err
	}
	now := w.svc.timestamp()
	var created store.User
	err = w.update(ctx, func(tx store.Tx) error {
		if err := once.check(tx); err != nil {
			return err
		}
		// The policy is read again here so that a policy changed since the
		// check above still governs this password.
		settings, err := w.settings(tx)
		if err != nil {
			return err
		}
		if err := nu.validate(settings.PasswordPolicy); err != nil {
			return err
		}
		if err := w.checkUnique(tx, 0, nu.Username, nu.Email); err != nil {
			return err
		}
		id, err := tx.NextID(w.slug, store.SeqUsers)
		if err != nil {
			return err
		}
		created = store.User{
			ID: id, Username: nu.Username, Email: nu.Email, FullName: nu.FullName,
			Enabled: true, PasswordHash: hash, CreatedAt: now, UpdatedAt: now, Version: newVersion(0),
		}
		if err := tx.PutUser(w.slug, created); err != nil {
			return err
		}
		if err := w.queueVerificationEmail(tx, created); err != nil {
			return err
		}
		if err := once.complete(tx, userFromRecord(created), created.Version); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditUserCreated, target: userTarget(created), changes: newUserChanges(created)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserCreated, userFromRecord(created))
	})
	if err != nil {
		return User{}, fromStore(err, "user")
	}
	return userFromRecord(created), nil
}

// newUserChanges are the changes of the audit record of a user created:
// its username, email and full name.
func newUserChanges(u store.User) auditChanges {
	return auditChanges{}.set("username", nil, u.Username).set("email", nil, u.Email).set("fullName", nil, u.FullName)
}

func (nu NewUser) validate(policy PasswordPolicy) error {
	var p problems
	checkUsername(&p, "username", nu.Username)
	checkEmail(&p, "email", nu.Email)
	checkFullName(&p, "fullName", nu.FullName)
	if nu.Password == "" {
		p.add("password", RuleRequired, "is required")
	} else {
		policy.check(&p, nu.Password, nu.Username, nu.Email)
	}
	return p.err("invalid user")
}

// checkUnique returns a CodeConflict error when username or email (either
// may be empty to skip it) belongs to a user other than self.
func (w *Workspace) checkUnique(tx store.Tx, self int64, username, email string) error {
	var p problems
	taken := func(field string, lookup func(string, string) (int64, error), value string) error {
		if value == "" {
			return nil
		}
		id, err := lookup(w.slug, value)
		switch {
		case isNotFound(err):
			return nil
		case err != nil:
			return err
		case id != self:
			p.add(field, RuleTaken, "is already in use")
		}
		return nil
	}
	if err := taken("username", tx.UserIDByUsername, username); err != nil {
		return err
	}
	if err := taken("email", tx.UserIDByEmail, email); err != nil {
		return err
	}
	return p.conflict("username or email already in use")
}

// GetUser returns the user with the id. Disabled users are returned too.
func (w *Workspace) GetUser(ctx context.Context, id int64) (User, error) {
	var rec store.User
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = w.user(tx, id)
		return err
	})
	if err != nil {
		return User{}, fromStore(err, "user")
	}
	return userFromRecord(rec), nil
}

// user reads the user record, with a not-found error that names the id.
func (w *Workspace) user(tx store.Tx, id int64) (store.User, error) {
	if id <= 0 {
		return store.User{}, notFound("user %d not found", id)
	}
	rec, err := tx.User(w.slug, id)
	if isNotFound(err) {
		return store.User{}, notFound("user %d not found", id)
	}
	return rec, err
}

// ListUsers returns a page of users in ascending id order. A non-empty
// search keeps the users whose username, email or full name starts with it,
// ignoring case and taken literally (no wildcards). Total counts all
// matching users.
func (w *Workspace) ListUsers(ctx context.Context, search string, page *Page) (List[User], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[User]{}, err
	}
	var p problems
	checkUTF8(&p, "search", search)
	if err := p.err("invalid search"); err != nil {
		return List[User]{}, err
	}
	var recs []store.User
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		recs, total, err = tx.Users(w.slug, store.UserQuery{Prefix: search, Offset: pg.Offset, Limit: pg.Limit})
		return err
	})
	if err != nil {
		return List[User]{}, fromStore(err, "workspace")
	}
	return List[User]{Items: mapAll(recs, userFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// UpdateUser replaces the user's email and full name. A changed email is
// no longer verified and, when the workspace has SMTP settings, gets a
// verification email queued in the same transaction; links sent to the
// old address no longer verify. The username cannot change. Errors are
// checked in this order: invalid input, a missing user, upd.Precondition,
// a taken email.
func (w *Workspace) UpdateUser(ctx context.Context, id int64, upd UserUpdate) (User, error) {
	var p problems
	checkEmail(&p, "email", upd.Email)
	checkFullName(&p, "fullName", upd.FullName)
	if err := p.err("invalid user"); err != nil {
		return User{}, err
	}
	now := w.svc.timestamp()
	var rec store.User
	err := w.update(ctx, func(tx store.Tx) (err error) {
		if rec, err = w.user(tx, id); err != nil {
			return err
		}
		if err := upd.Precondition.check(true, rec.Version, fmt.Sprintf("user %d", id)); err != nil {
			return err
		}
		if err := w.checkUnique(tx, id, "", upd.Email); err != nil {
			return err
		}
		emailChanged := rec.Email != upd.Email
		changes := auditChanges{}.setIfChanged("email", rec.Email, upd.Email).setIfChanged("fullName", rec.FullName, upd.FullName)
		if emailChanged {
			changes = changes.setIfChanged("emailVerified", rec.EmailVerified, false)
			rec.EmailVerified = false
		}
		rec.Email, rec.FullName, rec.UpdatedAt = upd.Email, upd.FullName, now
		rec.Version = newVersion(rec.Version)
		if err := tx.PutUser(w.slug, rec); err != nil {
			return err
		}
		if emailChanged {
			if err := w.queueVerificationEmail(tx, rec); err != nil {
				return err
			}
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditUserUpdated, target: userTarget(rec), changes: changes}); err != nil {
			return err
		}
		return w.emit(tx, EventUserUpdated, userFromRecord(rec))
	})
	if err != nil {
		return User{}, fromStore(err, "user")
	}
	return userFromRecord(rec), nil
}

// DisableUser disables the user: it keeps its data, roles and session
// history but can no longer authenticate, and its active sessions and its
// grants (every access and refresh token issued to it) are revoked in the
// same transaction, with one audit record, user.disabled, counting the
// sessions revoked. Disabling a disabled user succeeds and changes
// nothing.
func (w *Workspace) DisableUser(ctx context.Context, id int64) error {
	return w.setEnabled(ctx, id, false)
}

// EnableUser enables a disabled user again. Enabling an enabled user
// succeeds.
func (w *Workspace) EnableUser(ctx context.Context, id int64) error {
	return w.setEnabled(ctx, id, true)
}

func (w *Workspace) setEnabled(ctx context.Context, id int64, enabled bool) error {
	now := w.svc.timestamp()
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := w.user(tx, id)
		if err != nil || rec.Enabled == enabled {
			return err
		}
		rec.Enabled, rec.UpdatedAt = enabled, now
		rec.Version = newVersion(rec.Version)
		if err := tx.PutUser(w.slug, rec); err != nil {
			return err
		}
		changes := auditChanges{}.set("enabled", !enabled, enabled)
		if enabled {
			if err := w.audit(ctx, tx, auditEntry{action: AuditUserEnabled, target: userTarget(rec), changes: changes}); err != nil {
				return err
			}
			return w.emit(tx, EventUserEnabled, userFromRecord(rec))
		}
		if err := w.revokeUserGrants(tx, id, "", revokedUserDisabled, now); err != nil {
			return err
		}
		revoked, err := w.revokeUserSessions(tx, id, "user_disabled", now)
		if err != nil {
			return err
		}
		changes = changes.set("sessionsRevoked", nil, revoked)
		if err := w.audit(ctx, tx, auditEntry{action: AuditUserDisabled, target: userTarget(rec), changes: changes}); err != nil {
			return err
		}
		return w.emit(tx, EventUserDisabled, userFromRecord(rec))
	})
	return fromStore(err, "user")
}

// AssignRole assigns the role to the user directly (in addition to roles
// inherited through groups), with user.role.assigned. Assigning a role
// assigned directly already succeeds and emits nothing. An unknown user
// or role is CodeNotFound.
func (w *Workspace) AssignRole(ctx context.Context, userID, roleID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		role, err := w.getNamed(tx, roleKind, roleID)
		if err != nil {
			return err
		}
		roles, err := tx.UserRoles(w.slug, userID)
		if err != nil || slices.Contains(roles, roleID) {
			return err // assigning an assigned role changes nothing
		}
		if err := tx.AddUserRole(w.slug, userID, roleID); err != nil {
			return err
		}
		err = w.audit(ctx, tx, auditEntry{action: AuditUserRoleAssigned, target: userTarget(u),
			changes: auditChanges{}.set("role", nil, role.Name)})
		if err != nil {
			return err
		}
		return w.emit(tx, EventUserRoleAssigned, roleEvent{UserID: userID, RoleID: roleID})
	})
	return fromStore(err, "role")
}

// RemoveRole removes a directly assigned role, with user.role.removed. A
// role that is not directly assigned (inherited roles included) is a
// not-found error.
func (w *Workspace) RemoveRole(ctx context.Context, userID, roleID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		err = tx.RemoveUserRole(w.slug, userID, roleID)
		if isNotFound(err) {
			return notFound("role %d is not directly assigned to user %d", roleID, userID)
		}
		if err != nil {
			return err
		}
		role, err := w.getNamed(tx, roleKind, roleID)
		if err != nil {
			return err
		}
		err = w.audit(ctx, tx, auditEntry{action: AuditUserRoleRemoved, target: userTarget(u),
			changes: auditChanges{}.set("role", role.Name, nil)})
		if err != nil {
			return err
		}
		return w.emit(tx, EventUserRoleRemoved, roleEvent{UserID: userID, RoleID: roleID})
	})
	return fromStore(err, "role")
}
