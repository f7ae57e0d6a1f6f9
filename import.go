package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// ImportedUser is one user of an ImportUsers batch: a user migrated from
// another system, with its password already hashed there, or one that
// ExportUsers read from a workspace. Its JSON form (the field tags) is
// one line of identityd's JSON Lines import and export.
//
// An ImportedUser can carry everything needed to sign in as the user:
// the password hash and, in TOTP, the second factor's secret in the clear
// (a secret sealed with Options.KeyEncryptionKey is opened for
// ExportUsers and sealed again, with the importing Service's key, by
// ImportUsers). An export must therefore be protected like the database
// itself: readable by the administrators only, sent over encrypted
// channels, and deleted once the migration is done.
type ImportedUser struct {
	// Username, Email and FullName follow the rules of NewUser.
	Username string `json:"username"`
	Email    string `json:"email"`
	FullName string `json:"fullName"`
	// PasswordHash is the user's hash in one of the encodings the library
	// verifies: argon2id (PHC string), bcrypt ($2a$, $2b$, $2y$, cost at
	// most 16), PBKDF2 in PHC or passlib form ($pbkdf2-sha256$...) or in
	// Django's form (pbkdf2_sha256$...). Empty means the user has no
	// password and cannot authenticate with one. A hash that is not
	// argon2id at the current parameters is replaced at the user's first
	// successful login.
	PasswordHash string `json:"passwordHash,omitempty"`
	// EmailVerified imports the email address as verified.
	EmailVerified bool `json:"emailVerified,omitempty"`
	// Disabled imports the user disabled.
	Disabled bool `json:"disabled,omitempty"`
	// MFAEnabled imports the user with MFA on; a TOTP factor turns it on
	// whatever this says.
	MFAEnabled bool `json:"mfaEnabled,omitempty"`
	// CreatedAt keeps the original creation time; zero means now. It is
	// kept to the microsecond, in UTC.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// Attributes follow the rules of SetAttribute.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Roles are the roles assigned to the user directly, by name (as
	// ExportUsers writes them) or by id (as files exported before roles
	// had names hold them). A name the workspace has no role of creates
	// the role (role.created); an id must be a role's.
	Roles []RoleRef `json:"roles,omitempty"`
	// Groups are the names of the groups the user is a member of; a name
	// the workspace has no group of creates the group (group.created).
	Groups []string `json:"groups,omitempty"`
	// TOTP, when not nil, is the user's confirmed TOTP second factor.
	TOTP *ImportedTOTP `json:"totp,omitempty"`
	// PasskeyHandle is the user's WebAuthn user handle, base64url without
	// padding (1 to 64 bytes), which the user's passkeys hold: kept, so
	// that they keep signing the user in. Required with Passkeys; unique
	// in the workspace (CodeConflict otherwise).
	PasskeyHandle string `json:"passkeyHandle,omitempty"`
	// Passkeys are the user's passkeys, at most MaxPasskeysPerUser; a
	// credential id the workspace has already is CodeConflict.
	Passkeys []ImportedPasskey `json:"passkeys,omitempty"`
}

// ImportedPasskey is a passkey of an ImportedUser: the credential and
// its metadata, as ExportUsers writes it. Its public key is the
// credential's, nothing secret; the relying party (the issuer's host)
// must be the same where it is imported, or the browser will not offer
// it.
type ImportedPasskey struct {
	// ID is the credential id, base64url without padding.
	ID   string `json:"id"`
	Name string `json:"name"`
	// PublicKey is the COSE_Key, base64url without padding.
	PublicKey      string    `json:"publicKey"`
	SignCount      uint32    `json:"signCount,omitempty"`
	AAGUID         string    `json:"aaguid,omitempty"`
	BackupEligible bool      `json:"backupEligible,omitempty"`
	BackupState    bool      `json:"backupState,omitempty"`
	CreatedAt      time.Time `json:"createdAt,omitzero"`
	LastUsedAt     time.Time `json:"lastUsedAt,omitzero"`
}

// RoleRef names a role of an ImportedUser: by its name, a JSON string, or
// by its id, a JSON number.
type RoleRef struct {
	// ID is the role's id, when Name is empty.
	ID int64
	// Name is the role's name.
	Name string
}

// RoleName returns the RoleRef of the role named name.
func RoleName(name string) RoleRef { return RoleRef{Name: name} }

// RoleID returns the RoleRef of the role with the id.
func RoleID(id int64) RoleRef { return RoleRef{ID: id} }

// MarshalJSON writes the name, or the id when there is no name.
func (r RoleRef) MarshalJSON() ([]byte, error) {
	if r.Name != "" {
		return json.Marshal(r.Name)
	}
	return json.Marshal(r.ID)
}

// UnmarshalJSON reads a name (a string) or an id (an integer).
func (r *RoleRef) UnmarshalJSON(b []byte) error {
	*r = RoleRef{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.Name)
	}
	if err := json.Unmarshal(b, &r.ID); err != nil {
		return errors.New("a role is its name (a string) or its id (an integer)")
	}
	return nil
}

// ImportedTOTP is the confirmed TOTP second factor of an ImportedUser:
// the user's authenticator app keeps working after the import, and the
// recovery codes they hold stay valid.
type ImportedTOTP struct {
	// Secret is the shared secret in base32 without padding, as
	// BeginTOTPEnrollment shows it (upper or lower case, with or without
	// "=" padding, is accepted): 10-64 bytes once decoded. The codes are
	// RFC 6238's defaults: HMAC-SHA1, 6 digits, 30-second steps.
	Secret string `json:"secret"`
	// ConfirmedAt is when the factor was confirmed; required. It is kept
	// to the microsecond, in UTC.
	ConfirmedAt time.Time `json:"confirmedAt"`
	// LastStep is the TOTP time step (Unix time / 30) of the last code
	// accepted, 0 for none: a code of that step or an earlier one is
	// refused as a replay. It is at least 0.
	LastStep int64 `json:"lastStep,omitempty"`
	// RecoveryCodes are the hashes of the unused recovery codes as the
	// library stores them (32 bytes each, base64 in JSON; at most
	// RecoveryCodeCount). Codes of another system cannot be imported: its
	// hashes are of another form.
	RecoveryCodes [][]byte `json:"recoveryCodes,omitempty"`
}

// ImportUsers creates a batch of up to MaxImportBatch users in one
// transaction: either all of them are created or, on any error, none. A
// validation problem is a CodeInvalid error and a username or email taken
// (in the workspace or twice in the batch, ignoring case) is a CodeConflict
// error; in both, Fields names every problem as "users[i].field". The
// created users are returned in batch order with their new ids. A TOTP
// factor is stored confirmed, its secret sealed for the new user id with
// the Service's KeyEncryptionKey when it has one. ImportUsers of what
// ExportUsers gave reproduces the users (with new ids and UpdatedAt).
//
// The audit trail gets one record per user, user.imported (its username,
// email and full name, never its hash or second factor), and one per role
// or group the batch created (role.created, group.created), in the
// batch's transaction.
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
		holds, err := w.importAccess(ctx, tx, batch, now)
		if err != nil {
			return err
		}
		bulk, ok := bulkOf(tx)
		if !ok || len(batch) == 0 {
			for i, iu := range batch {
				rec, err := w.importOne(tx, iu, holds[i], now)
				if err != nil {
					return err
				}
				created = append(created, rec)
			}
			if err := w.importPasskeys(tx, batch, created); err != nil {
				return err
			}
			return w.auditImported(ctx, tx, created)
		}
		// The store writes the whole batch in one request: the same
		// records, drawn and sealed in the same order.
		inserts := make([]store.UserInsert, 0, len(batch))
		for i, iu := range batch {
			ins, err := w.importRecords(tx, iu, holds[i], now)
			if err != nil {
				return err
			}
			inserts = append(inserts, ins)
			created = append(created, ins.User)
		}
		if err := bulk.InsertUsers(w.slug, inserts); err != nil {
			return err
		}
		if err := w.importPasskeys(tx, batch, created); err != nil {
			return err
		}
		return w.auditImported(ctx, tx, created)
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

// auditImported writes the audit record of each user imported in tx.
func (w *Workspace) auditImported(ctx context.Context, tx store.Tx, users []store.User) error {
	for _, u := range users {
		if err := w.audit(ctx, tx, auditEntry{action: AuditUserImported, target: userTarget(u), changes: newUserChanges(u)}); err != nil {
			return err
		}
	}
	return nil
}

// bulkOf returns tx as a store.Bulk, if the store's transactions are one
// (through an observed Update's wrapper too).
func bulkOf(tx store.Tx) (store.Bulk, bool) {
	if otx, ok := tx.(*observedTx); ok {
		tx = otx.Tx
	}
	b, ok := tx.(store.Bulk)
	return b, ok
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
			f := field(fmt.Sprintf("roles[%d]", j))
			switch {
			case role.Name != "":
				checkNamedName(&p, f, role.Name)
			case role.ID <= 0:
				p.add(f, RuleRange, "must be a role's name or a positive role id")
			}
		}
		for j, name := range iu.Groups {
			checkNamedName(&p, field(fmt.Sprintf("groups[%d]", j)), name)
		}
		if iu.TOTP != nil {
			checkImportedTOTP(&p, field("totp"), iu.TOTP)
		}
		checkImportedPasskeys(&p, field, iu)
	}
	seen := map[string]bool{}
	for i, iu := range batch {
		for j, pk := range iu.Passkeys {
			if seen[pk.ID] {
				p.add(fmt.Sprintf("users[%d].passkeys[%d].id", i, j), RuleDuplicate, "is another passkey's of the batch")
			}
			seen[pk.ID] = true
		}
	}
	return p.err("invalid import")
}

// Bounds of an imported TOTP secret, in bytes. BeginTOTPEnrollment makes
// 20 (160 bits, RFC 4226's recommendation); 10 (16 base32 characters)
// admits the shorter secrets other systems have made, and 64 is as long
// as an HMAC-SHA1 block.
const (
	minImportedTOTPSecret = 10
	maxImportedTOTPSecret = 64
)

// checkImportedTOTP checks an imported second factor; prefix is its field.
func checkImportedTOTP(p *problems, prefix string, t *ImportedTOTP) {
	if t.Secret == "" {
		p.add(prefix+".secret", RuleRequired, "is required")
	} else if secret, err := decodeImportedTOTPSecret(t.Secret); err != nil {
		p.add(prefix+".secret", RuleFormat, "must be base32 (RFC 4648)")
	} else if len(secret) < minImportedTOTPSecret || len(secret) > maxImportedTOTPSecret {
		p.add(prefix+".secret", RuleFormat, "must decode to %d-%d bytes, not %d", minImportedTOTPSecret, maxImportedTOTPSecret, len(secret))
	}
	if t.ConfirmedAt.IsZero() {
		p.add(prefix+".confirmedAt", RuleRequired, "is required")
	}
	if t.LastStep < 0 {
		p.add(prefix+".lastStep", RuleRange, "must be 0 or more")
	}
	if len(t.RecoveryCodes) > RecoveryCodeCount {
		p.add(prefix+".recoveryCodes", RuleMaxLength, "holds at most %d hashes", RecoveryCodeCount)
	}
	for j, h := range t.RecoveryCodes {
		if len(h) != sha256.Size {
			p.add(fmt.Sprintf("%s.recoveryCodes[%d]", prefix, j), RuleFormat, "must be a %d-byte SHA-256 hash, not %d bytes", sha256.Size, len(h))
		}
	}
}

// decodeImportedTOTPSecret decodes an imported secret: base32 in upper
// or lower case, with or without padding.
func decodeImportedTOTPSecret(s string) ([]byte, error) {
	return totpEncoding.DecodeString(strings.TrimRight(strings.ToUpper(s), "="))
}

// checkImportUnique reports every username and email that is taken in the
// workspace or appears twice in the batch, ignoring case. A store that
// implements store.Bulk answers for the whole batch in one read;
// otherwise each username and email is looked up in turn.
func (w *Workspace) checkImportUnique(tx store.Tx, batch []ImportedUser) error {
	taken, err := w.importKeysTaken(tx, batch)
	if err != nil {
		return err
	}
	var p problems
	usernames, emails := map[string]int{}, map[string]int{}
	for i, iu := range batch {
		for _, f := range []struct {
			name, value string
			seen        map[string]int
			email       bool
		}{
			{"username", iu.Username, usernames, false},
			{"email", iu.Email, emails, true},
		} {
			field := fmt.Sprintf("users[%d].%s", i, f.name)
			folded := store.Fold(f.value)
			if first, dup := f.seen[folded]; dup {
				p.add(field, RuleDuplicate, "is the same as users[%d].%s", first, f.name)
				continue
			}
			f.seen[folded] = i
			in, err := taken(i, f.email)
			if err != nil {
				return err
			}
			if in {
				p.add(field, RuleTaken, "is already in use")
			}
		}
	}
	return p.conflict("usernames or emails of the batch are already in use")
}

// importKeysTaken returns a function that reports whether the username
// (or, with email, the email) of batch[i] belongs to a user of the
// workspace. With store.Bulk it reads the answers for the whole batch at
// once; otherwise it looks each one up when asked. A workspace that does
// not exist holds no user, as its lookups say.
func (w *Workspace) importKeysTaken(tx store.Tx, batch []ImportedUser) (func(i int, email bool) (bool, error), error) {
	bulk, ok := bulkOf(tx)
	if !ok || len(batch) == 0 {
		return func(i int, email bool) (bool, error) {
			lookup, value := tx.UserIDByUsername, batch[i].Username
			if email {
				lookup, value = tx.UserIDByEmail, batch[i].Email
			}
			_, err := lookup(w.slug, value)
			switch {
			case err == nil:
				return true, nil
			case isNotFound(err):
				return false, nil
			}
			return false, err
		}, nil
	}
	usernames, emails := make([]string, len(batch)), make([]string, len(batch))
	for i, iu := range batch {
		usernames[i], emails[i] = iu.Username, iu.Email
	}
	usernameTaken, emailTaken, err := bulk.UserKeysTaken(w.slug, usernames, emails)
	switch {
	case isNotFound(err):
		usernameTaken, emailTaken = make([]bool, len(batch)), make([]bool, len(batch))
	case err != nil:
		return nil, err
	case len(usernameTaken) != len(batch) || len(emailTaken) != len(batch):
		return nil, fmt.Errorf("store: UserKeysTaken answered for %d usernames and %d emails of %d", len(usernameTaken), len(emailTaken), len(batch))
	}
	return func(i int, email bool) (bool, error) {
		if email {
			return emailTaken[i], nil
		}
		return usernameTaken[i], nil
	}, nil
}

// importOne creates one imported user with the Tx methods.
func (w *Workspace) importOne(tx store.Tx, iu ImportedUser, holds importedAccess, now time.Time) (store.User, error) {
	ins, err := w.importRecords(tx, iu, holds, now)
	if err != nil {
		return store.User{}, err
	}
	id := ins.User.ID
	if err := tx.PutUser(w.slug, ins.User); err != nil {
		return store.User{}, err
	}
	if ins.SecondFactor != nil {
		if err := tx.PutSecondFactor(w.slug, *ins.SecondFactor); err != nil {
			return store.User{}, err
		}
	}
	for key, value := range ins.Attributes {
		if err := tx.PutUserAttribute(w.slug, id, key, value); err != nil {
			return store.User{}, err
		}
	}
	for _, role := range ins.Roles {
		if err := tx.AddUserRole(w.slug, id, role); err != nil {
			return store.User{}, err
		}
	}
	for _, group := range ins.Groups {
		if err := tx.AddGroupMember(w.slug, group, id); err != nil {
			return store.User{}, err
		}
	}
	return ins.User, nil
}

// importRecords draws the id of one imported user and returns its
// records: the user, its attributes, roles and groups (holds), and its
// second factor with the secret sealed for that id.
func (w *Workspace) importRecords(tx store.Tx, iu ImportedUser, holds importedAccess, now time.Time) (store.UserInsert, error) {
	id, err := tx.NextID(w.slug, store.SeqUsers)
	if err != nil {
		return store.UserInsert{}, err
	}
	createdAt := now
	if !iu.CreatedAt.IsZero() {
		createdAt = iu.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	ins := store.UserInsert{
		User: store.User{
			ID: id, Username: iu.Username, Email: iu.Email, FullName: iu.FullName,
			EmailVerified: iu.EmailVerified, Enabled: !iu.Disabled, MFAEnabled: iu.MFAEnabled || iu.TOTP != nil,
			PasswordHash: iu.PasswordHash, CreatedAt: createdAt, UpdatedAt: now, Version: newVersion(0),
		},
		Attributes: iu.Attributes,
		Roles:      holds.roles,
		Groups:     holds.groups,
	}
	if iu.TOTP != nil {
		f, err := w.importedFactor(id, iu.TOTP)
		if err != nil {
			return store.UserInsert{}, err
		}
		ins.SecondFactor = &f
	}
	return ins, nil
}

// importedAccess is what an imported user holds: the ids of its roles
// and of its groups.
type importedAccess struct{ roles, groups []int64 }

// importAccess resolves the roles and groups of every user of the batch
// to ids, in tx: a name the workspace has no role or group of creates it
// (within the workspace's limits, with its created event and audit
// record); an id that is no role's is CodeInvalid, and so is a user with
// more groups than Limits.GroupsPerUser.
func (w *Workspace) importAccess(ctx context.Context, tx store.Tx, batch []ImportedUser, now time.Time) ([]importedAccess, error) {
	set, err := w.settings(tx)
	if err != nil {
		return nil, err
	}
	ids := map[namedKey]int64{} // resolved names and ids, once each
	resolve := func(k namedKind, name string, id int64) (int64, bool, error) {
		key := namedKey{k.what, name, id}
		if got, ok := ids[key]; ok {
			return got, true, nil
		}
		var err error
		if name == "" {
			_, err = k.get(tx, w.slug, id)
		} else if id, err = k.byName(tx, w.slug, name); isNotFound(err) {
			var r store.Role
			if r, err = w.createNamed(tx, k, name, "", now); err == nil {
				err = w.auditImportCreated(ctx, tx, k, r)
			}
			id = r.ID
		}
		if isNotFound(err) {
			return 0, false, nil
		}
		ids[key] = id
		return id, err == nil, err
	}
	var p problems
	out := make([]importedAccess, len(batch))
	for i, iu := range batch {
		if len(iu.Groups) > set.Limits.groupsPerUser() {
			p.add(fmt.Sprintf("users[%d].groups", i), RuleRange, "must name at most %d groups (the workspace's limit)", set.Limits.groupsPerUser())
		}
		for j, ref := range iu.Roles {
			id, ok, err := resolve(roleKind, ref.Name, ref.ID)
			if err != nil {
				return nil, err
			}
			if !ok {
				p.add(fmt.Sprintf("users[%d].roles[%d]", i, j), RuleUnknown, "no role has the id %d", ref.ID)
				continue
			}
			out[i].roles = append(out[i].roles, id)
		}
		for _, name := range iu.Groups {
			id, _, err := resolve(groupKind, name, 0)
			if err != nil {
				return nil, err
			}
			out[i].groups = append(out[i].groups, id)
		}
	}
	return out, p.err("invalid import")
}

// auditImportCreated records a role or group r that an import created,
// as CreateRole and CreateGroup record theirs: role.created or
// group.created, with its name.
func (w *Workspace) auditImportCreated(ctx context.Context, tx store.Tx, k namedKind, r store.Role) error {
	action, target := AuditRoleCreated, TargetRole
	if k.what == groupKind.what {
		action, target = AuditGroupCreated, TargetGroup
	}
	return w.audit(ctx, tx, auditEntry{action: action, target: AuditTarget{Kind: target, ID: strconv.FormatInt(r.ID, 10), Display: r.Name},
		changes: auditChanges{}.set("name", nil, r.Name)})
}

// namedKey is a role or group of an import as it names it.
type namedKey struct {
	kind, name string
	id         int64
}

// importedFactor returns the confirmed factor t of the new user id, its
// secret sealed for that id. validateImport has checked t.
func (w *Workspace) importedFactor(userID int64, t *ImportedTOTP) (store.SecondFactor, error) {
	secret, err := decodeImportedTOTPSecret(t.Secret)
	if err != nil {
		return store.SecondFactor{}, err
	}
	sealed, err := w.svc.seal(totpAAD(w.slug, userID), secret)
	if err != nil {
		return store.SecondFactor{}, err
	}
	confirmedAt := t.ConfirmedAt.UTC().Truncate(time.Microsecond)
	return store.SecondFactor{
		UserID: userID, Secret: sealed, Confirmed: true,
		// The enrolment's start is not exported; its confirmation is the
		// closest known time.
		CreatedAt: confirmedAt, ConfirmedAt: confirmedAt, LastStep: t.LastStep,
		RecoveryCodes: slices.Clone(t.RecoveryCodes),
	}, nil
}

// checkImportedPasskeys reports the problems of an imported user's
// passkeys and handle.
func checkImportedPasskeys(p *problems, field func(string) string, iu ImportedUser) {
	if len(iu.Passkeys) == 0 && iu.PasskeyHandle == "" {
		return
	}
	if h, err := base64.RawURLEncoding.DecodeString(iu.PasskeyHandle); err != nil || len(h) == 0 || len(h) > 64 {
		p.add(field("passkeyHandle"), RuleFormat, "must be 1 to 64 bytes in base64url without padding")
	}
	if len(iu.Passkeys) > MaxPasskeysPerUser {
		p.add(field("passkeys"), RuleMaxLength, "must have at most %d passkeys", MaxPasskeysPerUser)
	}
	for j, pk := range iu.Passkeys {
		f := func(name string) string { return field(fmt.Sprintf("passkeys[%d].%s", j, name)) }
		if id, err := base64.RawURLEncoding.DecodeString(pk.ID); err != nil || len(id) == 0 || len(id) > 1023 {
			p.add(f("id"), RuleFormat, "must be 1 to 1023 bytes in base64url without padding")
		}
		checkText(p, f("name"), pk.Name, 1, MaxPasskeyNameLength)
		if key, err := base64.RawURLEncoding.DecodeString(pk.PublicKey); err != nil || len(key) == 0 {
			p.add(f("publicKey"), RuleFormat, "must be a COSE key in base64url without padding")
		}
		if _, ok := parseAAGUID(pk.AAGUID); !ok {
			p.add(f("aaguid"), RuleFormat, "must be a UUID")
		}
	}
}

// parseAAGUID reads an AAGUID in its UUID form ("" for none).
func parseAAGUID(s string) ([]byte, bool) {
	if s == "" {
		return nil, true
	}
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	return b, err == nil && len(b) == 16 && len(s) == 36
}

// importPasskeys writes the handles and passkeys of the imported users
// (created[i] is batch[i]'s record) in tx: a credential id or a handle the
// workspace has already is CodeConflict.
func (w *Workspace) importPasskeys(tx store.Tx, batch []ImportedUser, created []store.User) error {
	for i, iu := range batch {
		if len(iu.Passkeys) == 0 && iu.PasskeyHandle == "" {
			continue
		}
		u := created[i]
		handle, _ := base64.RawURLEncoding.DecodeString(iu.PasskeyHandle)
		if _, err := tx.UserIDByPasskeyHandle(w.slug, handle); err == nil {
			return errorf(CodeConflict, "users[%d].passkeyHandle is another user's of the workspace", i)
		} else if !isNotFound(err) {
			return err
		}
		if err := tx.PutPasskeyHandle(w.slug, store.PasskeyHandle{UserID: u.ID, Handle: handle, CreatedAt: u.CreatedAt}); err != nil {
			return err
		}
		for j, pk := range iu.Passkeys {
			if _, err := tx.Passkey(w.slug, pk.ID); err == nil {
				return errorf(CodeConflict, "users[%d].passkeys[%d] is a passkey the workspace has already", i, j)
			} else if !isNotFound(err) {
				return err
			}
			key, _ := base64.RawURLEncoding.DecodeString(pk.PublicKey)
			aaguid, _ := parseAAGUID(pk.AAGUID)
			err := tx.PutPasskey(w.slug, store.Passkey{
				ID: pk.ID, UserID: u.ID, Name: pk.Name, PublicKey: key, SignCount: int64(pk.SignCount), AAGUID: aaguid,
				BackupEligible: pk.BackupEligible, BackupState: pk.BackupState,
				CreatedAt: pk.CreatedAt.UTC().Truncate(time.Microsecond), LastUsedAt: pk.LastUsedAt.UTC().Truncate(time.Microsecond),
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
