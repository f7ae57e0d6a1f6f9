package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/identitylib/identity"
)

// Roles and groups: named records of the workspace, with the same shapes
// as users have (pages, 201 with Location and ETag, conditional PUT,
// idempotent POST). routes names each function here with its scopes.

// Roles.

// listRoles answers a page of roles, those whose name starts with search
// when it is given.
func listRoles(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, page, err := pagedQuery(c)
	if err != nil {
		return err
	}
	list, err := c.ws.ListRoles(ctx, q.Get("search"), page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// createRole answers 201 with the role, its Location and its ETag; with
// an Idempotency-Key, a retry gets the same answer, as for users.
func createRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	idem, err := c.idempotent()
	if err != nil {
		return err
	}
	var nr identity.NewRole
	if err := decodeBody(w, c.r, field("name", &nr.Name), field("description", &nr.Description)); err != nil {
		return err
	}
	nr.Idempotency = idem.of()
	role, err := c.ws.CreateRole(ctx, nr)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(role.Version))
	return writeCreated(w, c.r, role.ID, role)
}

// getRole answers with the role and its ETag, or 304 for a matching
// If-None-Match.
func getRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("roleId", "role")
	if err != nil {
		return err
	}
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	role, err := c.ws.GetRole(ctx, id)
	if err != nil {
		return err
	}
	return writeVersioned(w, ifNoneMatch, role.Version, role)
}

// updateRole replaces the role's name and description (an omitted
// description is the empty one) under If-Match and If-None-Match, and
// answers with the role and its new ETag. Assignments keep the role's id,
// so a rename changes no one's roles.
func updateRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("roleId", "role")
	if err != nil {
		return err
	}
	var upd identity.RoleUpdate
	if upd.Precondition, err = preconditionOf(c.r.Header); err != nil {
		return err
	}
	if err := decodeBody(w, c.r, field("name", &upd.Name), field("description", &upd.Description)); err != nil {
		return err
	}
	role, err := c.ws.UpdateRole(ctx, id, upd)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(role.Version))
	return writeJSON(w, http.StatusOK, role)
}

// deleteRole deletes the role and, in the same transaction, every
// assignment of it, to users and to groups.
func deleteRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("roleId", "role")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DeleteRole(ctx, id))
}

// listRoleHolders answers a page of the users who hold the role, directly
// or through a group, each once. It lists users, so its route needs
// users:read besides roles:read.
func listRoleHolders(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("roleId", "role")
	if err != nil {
		return err
	}
	_, page, err := pagedQuery(c)
	if err != nil {
		return err
	}
	list, err := c.ws.ListRoleHolders(ctx, id, page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// Groups.

// listGroups answers a page of groups, those whose name starts with
// search when it is given.
func listGroups(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, page, err := pagedQuery(c)
	if err != nil {
		return err
	}
	list, err := c.ws.ListGroups(ctx, q.Get("search"), page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// createGroup answers as createRole does, for a group.
func createGroup(ctx context.Context, w http.ResponseWriter, c *call) error {
	idem, err := c.idempotent()
	if err != nil {
		return err
	}
	var ng identity.NewGroup
	if err := decodeBody(w, c.r, field("name", &ng.Name), field("description", &ng.Description)); err != nil {
		return err
	}
	ng.Idempotency = idem.of()
	group, err := c.ws.CreateGroup(ctx, ng)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(group.Version))
	return writeCreated(w, c.r, group.ID, group)
}

// getGroup answers as getRole does, for a group.
func getGroup(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("groupId", "group")
	if err != nil {
		return err
	}
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	group, err := c.ws.GetGroup(ctx, id)
	if err != nil {
		return err
	}
	return writeVersioned(w, ifNoneMatch, group.Version, group)
}

// updateGroup answers as updateRole does, for a group: its members and
// roles stay.
func updateGroup(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("groupId", "group")
	if err != nil {
		return err
	}
	var upd identity.GroupUpdate
	if upd.Precondition, err = preconditionOf(c.r.Header); err != nil {
		return err
	}
	if err := decodeBody(w, c.r, field("name", &upd.Name), field("description", &upd.Description)); err != nil {
		return err
	}
	group, err := c.ws.UpdateGroup(ctx, id, upd)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(group.Version))
	return writeJSON(w, http.StatusOK, group)
}

// deleteGroup deletes the group with its memberships and the roles it
// carries: its members no longer hold what they held through it.
func deleteGroup(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("groupId", "group")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DeleteGroup(ctx, id))
}

// listGroupMembers answers a page of the group's members. It lists users,
// so its route needs users:read besides groups:read.
func listGroupMembers(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("groupId", "group")
	if err != nil {
		return err
	}
	_, page, err := pagedQuery(c)
	if err != nil {
		return err
	}
	list, err := c.ws.ListGroupMembers(ctx, id, page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// addGroupMember serves PUT of a membership: the path names it whole, so
// the PUT has no body, and putting one that exists is a 204 again.
func addGroupMember(ctx context.Context, w http.ResponseWriter, c *call) error {
	groupID, userID, err := c.groupAnd("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.AddGroupMember(ctx, groupID, userID))
}

// removeGroupMember ends a membership; one that does not exist is 404.
func removeGroupMember(ctx context.Context, w http.ResponseWriter, c *call) error {
	groupID, userID, err := c.groupAnd("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.RemoveGroupMember(ctx, groupID, userID))
}

// listGroupRoles answers every role the group carries (at most the
// workspace's rolesPerGroup limit, so unpaged), as {"roles": [...]}.
func listGroupRoles(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("groupId", "group")
	if err != nil {
		return err
	}
	roles, err := c.ws.ListGroupRoles(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rolesResponse{Roles: roles})
}

// assignGroupRole serves PUT of a group's role, without a body as
// addGroupMember; assigning it again is a 204 again.
func assignGroupRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	groupID, roleID, err := c.groupAnd("roleId", "role")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.AssignGroupRole(ctx, groupID, roleID))
}

// removeGroupRole ends a group's role; a role the group does not carry is
// 404.
func removeGroupRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	groupID, roleID, err := c.groupAnd("roleId", "role")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.RemoveGroupRole(ctx, groupID, roleID))
}

// groupAnd returns the ids of a path below a group, the group's checked
// first as the path names it first; name and what are the second id's
// parameter and resource.
func (c *call) groupAnd(name, what string) (groupID, id int64, err error) {
	if groupID, err = c.id("groupId", "group"); err != nil {
		return 0, 0, err
	}
	if id, err = c.id(name, what); err != nil {
		return 0, 0, err
	}
	return groupID, id, nil
}

// A user's groups and roles.

// listUserGroups answers every group the user is a member of (at most the
// workspace's groupsPerUser limit, so unpaged), as {"groups": [...]}.
func listUserGroups(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	groups, err := c.ws.ListUserGroups(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, groupsResponse{Groups: groups})
}

// listUserRoles answers the roles the user holds, each once with where it
// comes from: "direct" for a direct assignment, "groups" for the user's
// groups that carry it. Unpaged, as the user's groups and their roles are
// bounded by the workspace's limits.
func listUserRoles(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	roles, err := c.ws.ListUserRoles(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, userRolesResponse{Roles: roles})
}

// pagedQuery parses the query string of a list and its offset and limit.
func pagedQuery(c *call) (url.Values, *identity.Page, error) {
	q, err := query(c.r)
	if err != nil {
		return nil, nil, err
	}
	page, err := pageOf(q)
	if err != nil {
		return nil, nil, err
	}
	return q, page, nil
}
