package identity

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/identitylib/identity/store"
)

// exportPage is how many users ExportUsers reads from the store at once.
const exportPage = 1000

// errExportStopped marks, inside the transaction, that fn returned an
// error, which ExportUsers then returns as it is.
var errExportStopped = errors.New("export stopped by its callback")

// ExportUsers calls fn with every user of the workspace, in ascending id
// order, as an ImportedUser that ImportUsers takes back: the password
// hash, EmailVerified, Disabled (not Enabled), MFAEnabled, CreatedAt,
// the attributes, the directly assigned roles and the groups (by name),
// the passkeys with the user's WebAuthn handle (credential ids, public
// keys, metadata), and the confirmed TOTP
// factor (its secret opened with the Service's KeyEncryptionKey, and the
// hashes of the unused recovery codes). Ids, versions and UpdatedAt are
// not exported; neither is an enrolment still waiting for its first code,
// nor anything that is not the user's (sessions, lockout state, grants).
// The ImportedUser doc says why what fn gets must be guarded like the
// database.
//
// The users are a consistent snapshot: ExportUsers reads them all in one
// read transaction, which it holds until the last call of fn returns. A
// write meanwhile does not wait for it in PostgreSQL, which keeps the
// transaction's snapshot (VACUUM cannot remove the row versions that die
// meanwhile, and the export holds one connection of the pool), nor
// usually in bbolt, but there pages freed meanwhile are not reused until
// it ends (the file grows) and a write that must grow the file waits for
// it. Over a memstore.Store it holds the store's read lock, so every write
// waits. So fn should be quick (write to a buffered file, not a slow
// network peer), and it must not write through the same Service, which
// could wait for the export forever.
//
// An error of fn stops the export and is returned as it is; ctx is
// checked between pages of users. An unknown workspace is CodeNotFound. A
// TOTP secret that does not open (sealed with a key-encryption key the
// Service lacks) is CodeInternal.
//
// Each call leaves one audit record, export, once its read is over (the
// workspace its target, the number of users handed to fn in its
// changes), also when fn or ctx stopped it after some users: what left
// is on the trail. A failure to write the record is returned when the
// export itself did not fail.
func (w *Workspace) ExportUsers(ctx context.Context, fn func(ImportedUser) error) error {
	var fnErr error
	exported := 0
	err := w.view(ctx, func(tx store.Tx) error {
		fnErr, exported = nil, 0
		names := exportNames{roles: map[int64]string{}, groups: map[int64]string{}}
		for offset := 0; ; offset += exportPage {
			if err := ctx.Err(); err != nil {
				return err
			}
			page, total, err := tx.Users(w.slug, store.UserQuery{Offset: offset, Limit: exportPage})
			if err != nil {
				return err
			}
			for _, u := range page {
				iu, err := w.exportOne(tx, u, names)
				if err != nil {
					return err
				}
				exported++
				if err := fn(iu); err != nil {
					fnErr = err
					return errExportStopped
				}
			}
			if len(page) < exportPage || offset+len(page) >= total {
				return nil
			}
		}
	})
	var auditErr error
	if err == nil || exported > 0 {
		// Whatever stopped the export, what left is recorded.
		auditErr = w.auditAlone(context.WithoutCancel(ctx), auditEntry{
			action: AuditExport, target: AuditTarget{Kind: TargetWorkspace, ID: w.slug, Display: w.slug},
			changes: auditChanges{}.set("users", nil, exported),
		})
	}
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fromStore(err, "workspace")
	}
	return auditErr
}

// exportNames are the names of the roles and groups an export has read,
// by id: most users share them.
type exportNames struct{ roles, groups map[int64]string }

// name returns the name of the role or group with the id, read once.
func (w *Workspace) exportName(tx store.Tx, k namedKind, cache map[int64]string, id int64) (string, error) {
	if name, ok := cache[id]; ok {
		return name, nil
	}
	r, err := k.get(tx, w.slug, id)
	if err != nil {
		return "", err
	}
	cache[id] = r.Name
	return r.Name, nil
}

// exportOne reads what belongs to the user u in tx.
func (w *Workspace) exportOne(tx store.Tx, u store.User, names exportNames) (ImportedUser, error) {
	iu := ImportedUser{
		Username: u.Username, Email: u.Email, FullName: u.FullName, PasswordHash: u.PasswordHash,
		EmailVerified: u.EmailVerified, Disabled: !u.Enabled, MFAEnabled: u.MFAEnabled, CreatedAt: u.CreatedAt,
	}
	attrs, err := tx.UserAttributes(w.slug, u.ID)
	if err != nil {
		return iu, err
	}
	if len(attrs) > 0 {
		iu.Attributes = attrs
	}
	roles, err := tx.UserRoles(w.slug, u.ID)
	if err != nil {
		return iu, err
	}
	for _, id := range roles {
		name, err := w.exportName(tx, roleKind, names.roles, id)
		if err != nil {
			return iu, err
		}
		iu.Roles = append(iu.Roles, RoleName(name))
	}
	groups, err := tx.UserGroups(w.slug, u.ID)
	if err != nil {
		return iu, err
	}
	for _, id := range groups {
		name, err := w.exportName(tx, groupKind, names.groups, id)
		if err != nil {
			return iu, err
		}
		iu.Groups = append(iu.Groups, name)
	}
	if err := w.exportPasskeys(tx, u.ID, &iu); err != nil {
		return iu, err
	}
	f, err := tx.SecondFactor(w.slug, u.ID)
	switch {
	case isNotFound(err):
		return iu, nil
	case err != nil:
		return iu, err
	case !f.Confirmed:
		return iu, nil // an enrolment waiting for its first code
	}
	secret, err := w.svc.open(totpAAD(w.slug, u.ID), f.Secret)
	if err != nil {
		return iu, fmt.Errorf("the TOTP secret of user %d: %w", u.ID, err)
	}
	iu.TOTP = &ImportedTOTP{
		Secret: totpEncoding.EncodeToString(secret), ConfirmedAt: f.ConfirmedAt,
		LastStep: f.LastStep, RecoveryCodes: f.RecoveryCodes,
	}
	if len(iu.TOTP.RecoveryCodes) == 0 {
		iu.TOTP.RecoveryCodes = nil
	}
	return iu, nil
}

// ExportUsersJSONLines writes every user of the workspace to out as JSON
// Lines, one ImportedUser object per line in its JSON form, which is what
// identityd user import reads; it returns how many users it wrote. It is
// ExportUsers with a json.Encoder (HTML characters are not escaped), so
// everything ExportUsers says holds here, the read transaction held while
// out is written included: give it a buffered writer (and flush it). A
// write error stops the export and is returned as it is.
func (w *Workspace) ExportUsersJSONLines(ctx context.Context, out io.Writer) (int, error) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	n := 0
	err := w.ExportUsers(ctx, func(iu ImportedUser) error {
		if err := enc.Encode(iu); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// exportPasskeys sets the user's passkeys and handle in iu.
func (w *Workspace) exportPasskeys(tx store.Tx, userID int64, iu *ImportedUser) error {
	pks, err := tx.UserPasskeys(w.slug, userID)
	if err != nil || len(pks) == 0 {
		return err
	}
	h, err := tx.PasskeyHandle(w.slug, userID)
	if err != nil {
		return err
	}
	iu.PasskeyHandle = base64.RawURLEncoding.EncodeToString(h.Handle)
	for _, p := range pks {
		ip := ImportedPasskey{
			ID: p.ID, Name: p.Name, PublicKey: base64.RawURLEncoding.EncodeToString(p.PublicKey), SignCount: uint32(p.SignCount),
			BackupEligible: p.BackupEligible, BackupState: p.BackupState, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt,
		}
		if len(p.AAGUID) == 16 {
			ip.AAGUID = formatAAGUID(p.AAGUID)
		}
		iu.Passkeys = append(iu.Passkeys, ip)
	}
	return nil
}
