package identity

import (
	"context"
	"slices"

	"github.com/identitylib/identity/store"
)

// What a user holds: the roles assigned to it directly and the roles of
// every group it is a member of, read in one transaction with a number of
// reads that follows the user's groups (at most Limits.GroupsPerUser),
// never the members of a group.

// accessClaims are the claims of a user's access a token may carry, each
// named as the scope that asks for it.
var accessClaims = []string{ScopeGroups, ScopeRoles}

// AccessClaims returns the claims of a user's access that a client may
// receive whatever scopes it asks for (NewClient.Claims): groups and
// roles.
func AccessClaims() []string { return slices.Clone(accessClaims) }

// carried is which of the access claims a token carries, and why: those
// its scopes ask for (ClaimFromScope) and those its client always
// receives (ClaimFromClient). A zero ClaimSource is a claim not carried.
type carried struct{ groups, roles ClaimSource }

func carriedClaims(scopes, clientClaims []string) carried {
	by := func(claim string) ClaimSource {
		switch {
		case slices.Contains(scopes, claim):
			return ClaimSource{Kind: ClaimFromScope, Detail: claim}
		case slices.Contains(clientClaims, claim):
			return ClaimSource{Kind: ClaimFromClient, Detail: claim}
		}
		return ClaimSource{}
	}
	return carried{groups: by(ScopeGroups), roles: by(ScopeRoles)}
}

func (c carried) any() bool { return c.groups.Kind != "" || c.roles.Kind != "" }

// setAccessClaims sets the access claims c carries on a token's claims:
// the names, or, past limit names, the overage indication instead.
func (c carried) setAccessClaims(set claimSetter, acc store.UserAccess, limit int) {
	setNames := func(claim string, names []string, from ClaimSource) {
		if len(names) > limit {
			set.setFrom(claim+"_overage", true, from)
			return
		}
		set.setFrom(claim, names, from)
	}
	if c.groups.Kind != "" {
		setNames(ScopeGroups, groupNames(acc), c.groups)
	}
	if c.roles.Kind != "" {
		setNames(ScopeRoles, roleNames(acc), c.roles)
	}
}

// UserRole is a role a user holds, with where it comes from: the
// specification's roles are assigned "directly, in addition to roles
// inherited through group membership", and RemoveRole removes only the
// direct assignment.
type UserRole struct {
	Role
	// Direct reports that the role is assigned to the user directly
	// (AssignRole).
	Direct bool `json:"direct"`
	// Groups are the user's groups that carry the role, in ascending id
	// order (never nil).
	Groups []GroupRef `json:"groups"`
}

// GroupRef names a group.
type GroupRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// userAccess reads what the user holds in tx: in one read when the store
// offers one (store.Bulk), else with the Tx methods. An unknown user is
// CodeNotFound.
func (w *Workspace) userAccess(tx store.Tx, userID int64) (store.UserAccess, error) {
	if b, ok := bulkOf(tx); ok {
		if userID <= 0 {
			return store.UserAccess{}, notFound("user %d not found", userID)
		}
		acc, err := b.UserAccess(w.slug, userID)
		if isNotFound(err) {
			if _, werr := tx.Workspace(w.slug); werr != nil {
				return store.UserAccess{}, werr
			}
			return store.UserAccess{}, notFound("user %d not found", userID)
		}
		return acc, err
	}
	if _, err := w.user(tx, userID); err != nil {
		return store.UserAccess{}, err
	}
	acc := store.UserAccess{GroupRoles: map[int64][]int64{}}
	var err error
	if acc.Direct, err = tx.UserRoles(w.slug, userID); err != nil {
		return store.UserAccess{}, err
	}
	groupIDs, err := tx.UserGroups(w.slug, userID)
	if err != nil {
		return store.UserAccess{}, err
	}
	roleIDs := slices.Clone(acc.Direct)
	for _, id := range groupIDs {
		g, err := tx.Group(w.slug, id)
		if err != nil {
			return store.UserAccess{}, err
		}
		acc.Groups = append(acc.Groups, g)
		roles, err := tx.GroupRoles(w.slug, id)
		if err != nil {
			return store.UserAccess{}, err
		}
		if len(roles) > 0 {
			acc.GroupRoles[id] = roles
			roleIDs = append(roleIDs, roles...)
		}
	}
	slices.Sort(roleIDs)
	acc.Roles, err = w.rolesOf(tx, slices.Compact(roleIDs))
	return acc, err
}

// rolesOf reads the records of the roles with the ids, in their order.
func (w *Workspace) rolesOf(tx store.Tx, ids []int64) ([]store.Role, error) {
	roles := make([]store.Role, 0, len(ids))
	for _, id := range ids {
		r, err := tx.Role(w.slug, id)
		if err != nil {
			return nil, err
		}
		roles = append(roles, r)
	}
	return roles, nil
}

// effectiveRoles returns every role of acc with its sources, in ascending
// role id order.
func effectiveRoles(acc store.UserAccess) []UserRole {
	out := make([]UserRole, 0, len(acc.Roles))
	for _, r := range acc.Roles {
		ur := UserRole{Role: Role(namedFromRecord(r)), Groups: []GroupRef{}}
		_, ur.Direct = slices.BinarySearch(acc.Direct, r.ID)
		for _, g := range acc.Groups {
			if _, ok := slices.BinarySearch(acc.GroupRoles[g.ID], r.ID); ok {
				ur.Groups = append(ur.Groups, GroupRef{ID: g.ID, Name: g.Name})
			}
		}
		out = append(out, ur)
	}
	return out
}

// roleNames and groupNames are the names a token's roles and groups
// claims carry: sorted, each once.
func roleNames(acc store.UserAccess) []string {
	return sortedNames(acc.Roles, func(r store.Role) string { return r.Name })
}

func groupNames(acc store.UserAccess) []string {
	return sortedNames(acc.Groups, func(g store.Group) string { return g.Name })
}

func sortedNames[R any](recs []R, name func(R) string) []string {
	names := mapAll(recs, name)
	slices.Sort(names)
	return slices.Compact(names)
}

// ListUserRoles returns the roles the user holds, directly or through its
// groups, each once with its sources, in ascending role id order (never
// nil). An unknown user is CodeNotFound.
func (w *Workspace) ListUserRoles(ctx context.Context, userID int64) ([]UserRole, error) {
	var acc store.UserAccess
	err := w.view(ctx, func(tx store.Tx) (err error) {
		acc, err = w.userAccess(tx, userID)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return effectiveRoles(acc), nil
}
