package identity

import (
	"context"
	"math"
	"strconv"

	"github.com/identitylib/identity/store"
)

// Permanent deletion: the right to erasure for one user, and the end of a
// whole workspace. Neither is part of the REST API (permanent deletion is
// the administrators' act, docs/rules.md); DisableUser is the REST
// DELETE, and keeps everything.

// DeletedUser is what DeleteUserPermanently removed, for the record an
// administrator keeps of an erasure.
type DeletedUser struct {
	// User is the user as it was.
	User User `json:"user"`
	// Roles, Groups and Attributes count the directly assigned roles, the
	// group memberships and the attributes removed.
	Roles      int `json:"roles"`
	Groups     int `json:"groups"`
	Attributes int `json:"attributes"`
	// Sessions counts the sessions removed, active, expired and revoked.
	Sessions int `json:"sessions"`
	// Grants counts the grants removed, each with its refresh tokens.
	Grants int `json:"grants"`
	// SecondFactor reports that a second factor (or an enrolment) was
	// removed, with its recovery codes.
	SecondFactor bool `json:"secondFactor"`
	// Pseudonym stands for the user in the audit trail from now on, and
	// AuditRecords counts the records rewritten with it (see
	// docs/audit.md).
	Pseudonym    string `json:"pseudonym"`
	AuditRecords int    `json:"auditRecords"`
}

// userDeletedEvent is the data of user.deleted.
type userDeletedEvent struct {
	UserID   int64  `json:"userId"`
	Username string `json:"username"`
}

// DeleteUserPermanently deletes the user and every record of it, in one
// transaction: its attributes, roles and group memberships (what it held
// through its groups with them), its sessions, its grants with
// their refresh tokens, the authorization requests and codes it signed in
// to, its email verification, password reset and second-factor sign-in
// tokens, its second factor and recovery codes, its lockout state, and
// the emails queued about it (sent or not: each holds its address). Its
// username and email are free at once, and every session and token of it
// is refused from the next call on. It emits user.deleted with the id and
// username only. An unknown user is CodeNotFound.
//
// The audit trail keeps what happened to the user and what they did:
// those records keep the user's id, and the names they show become a
// pseudonym (DeletedUser.Pseudonym), as docs/audit.md says; user.deleted
// is recorded under it.
//
// What it keeps: the webhook deliveries of earlier events, already
// rendered with what each event carried (user.created carries the user),
// and the outcome of an idempotent CreateUser, kept for replay until
// Options.IdempotencyLifetime ends and SweepIdempotency removes it. An
// email whose sending is under way as the user is deleted may still go
// out; its link no longer works.
//
// This is not the REST API's DELETE, which disables a user (DisableUser)
// and keeps everything.
func (w *Workspace) DeleteUserPermanently(ctx context.Context, userID int64) (DeletedUser, error) {
	var out DeletedUser
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		roles, err := tx.UserRoles(w.slug, userID)
		if err != nil {
			return err
		}
		groups, err := tx.UserGroups(w.slug, userID)
		if err != nil {
			return err
		}
		attrs, err := tx.UserAttributes(w.slug, userID)
		if err != nil {
			return err
		}
		sessions, err := tx.UserSessions(w.slug, userID)
		if err != nil {
			return err
		}
		grants, err := tx.UserGrants(w.slug, userID)
		if err != nil {
			return err
		}
		_, err = tx.SecondFactor(w.slug, userID)
		if err != nil && !isNotFound(err) {
			return err
		}
		out = DeletedUser{
			User: userFromRecord(u), Roles: len(roles), Groups: len(groups), Attributes: len(attrs), Sessions: len(sessions),
			Grants: len(grants), SecondFactor: err == nil, Pseudonym: newPseudonym(),
		}
		if err := tx.DeleteUser(w.slug, userID); err != nil {
			return err
		}
		if out.AuditRecords, err = w.pseudonymizeAudit(tx, userID, out.Pseudonym); err != nil {
			return err
		}
		target := AuditTarget{Kind: TargetUser, ID: strconv.FormatInt(userID, 10), Display: out.Pseudonym}
		if err := w.audit(ctx, tx, auditEntry{action: AuditUserDeleted, target: target}); err != nil {
			return err
		}
		return w.emit(tx, EventUserDeleted, userDeletedEvent{UserID: u.ID, Username: u.Username})
	})
	if err != nil {
		return DeletedUser{}, fromStore(err, "user")
	}
	return out, nil
}

// DeletedWorkspace is what DeleteWorkspace removed.
type DeletedWorkspace struct {
	Slug string `json:"slug"`
	// Users, Roles, Groups, Webhooks, APIKeys and Clients count the users
	// (each with everything DeleteUserPermanently removes), roles, groups,
	// webhook endpoints (each with its deliveries), API keys and OAuth
	// clients removed.
	Users    int `json:"users"`
	Roles    int `json:"roles"`
	Groups   int `json:"groups"`
	Webhooks int `json:"webhooks"`
	APIKeys  int `json:"apiKeys"`
	Clients  int `json:"clients"`
}

// DeleteWorkspace deletes the workspace and every record of it in one
// transaction: its settings, users and everything of theirs, roles and
// groups, claim mappers, webhook endpoints with every delivery, email jobs, API keys,
// OAuth clients, signing keys, authorization requests, grants and tokens,
// idempotency records, id sequences and its audit trail. No event is
// emitted: the endpoints that would receive it are gone; the record of
// workspace.deleted goes to Options.AuditSink and the Observer only.
//
// From the next call on, its API keys, sessions and tokens are refused
// (the keys that verified its tokens are gone, and so are the Service's
// cached copies of them); a dispatcher watching the Service abandons the
// workspace's attempts in flight, as for a deleted endpoint. The slug is
// free: CreateWorkspace makes an empty workspace of it, whose ids start at
// 1 again. Handles on the workspace (*Workspace) see the workspace of that
// slug, if any. An unknown slug is CodeNotFound.
func (s *Service) DeleteWorkspace(ctx context.Context, slug string) (DeletedWorkspace, error) {
	var out DeletedWorkspace
	var hooks []store.Webhook
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Workspace(slug); err != nil {
			return err
		}
		_, users, err := tx.Users(slug, store.UserQuery{})
		if err != nil {
			return err
		}
		if hooks, _, err = tx.Webhooks(slug, 0, math.MaxInt); err != nil {
			return err
		}
		keys, err := tx.APIKeys(slug)
		if err != nil {
			return err
		}
		clients, err := tx.OAuthClients(slug)
		if err != nil {
			return err
		}
		_, roles, err := tx.Roles(slug, store.NameQuery{})
		if err != nil {
			return err
		}
		_, groups, err := tx.Groups(slug, store.NameQuery{})
		if err != nil {
			return err
		}
		out = DeletedWorkspace{Slug: slug, Users: users, Roles: roles, Groups: groups, Webhooks: len(hooks), APIKeys: len(keys), Clients: len(clients)}
		if err := tx.DeleteWorkspace(slug); err != nil {
			return err
		}
		// The trail went with the workspace: the record of its end goes
		// to the sink and the observer only.
		rec, err := s.auditRecord(ctx, slug, auditEntry{
			action: AuditWorkspaceDeleted, target: AuditTarget{Kind: TargetWorkspace, ID: slug, Display: slug},
		})
		addNote(tx, note{audit: &rec})
		return err
	})
	s.keys.forgetWorkspace(slug) // whatever Update returned: a commit may have happened
	if err != nil {
		return DeletedWorkspace{}, fromStore(err, "workspace")
	}
	s.forgetSigningKeys(slug)
	for _, h := range hooks {
		s.endpointDeleted(slug, h.ID)
	}
	s.endpointDeleted(slug, 0) // the workspace's mail lane
	return out, nil
}
