package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// candidateLimit is how many users a search for a new member shows.
const candidateLimit = 10

// roleChoices is how many role names the form that gives a group a role
// suggests.
const roleChoices = 100

// groupData is the data of a group's page.
type groupData struct {
	Slug    string
	Group   namedRow
	Members []memberRow
	Links   listLinks
	Roles   []namedRow
	// MemberQuery is the search for users to add; Candidates what it
	// found, with CandidatesTotal their number in all.
	MemberQuery     string
	Candidates      []memberRow
	CandidatesTotal int
	// RoleNames are suggestions for the role to give.
	RoleNames []string
}

// serveGroup is a group's page: its rename form, its members with the
// search that adds one, and its roles.
func (h *Handler) serveGroup(rq *request) error {
	v, err := h.groupView(rq)
	if err != nil {
		return err
	}
	d := v.Data.(groupData)
	q := rq.r.URL.Query()
	switch {
	case q.Get("saved") != "":
		v.Notice = "The name and description shown are in force."
	case q.Get("added") != "" || q.Get("removed") != "":
		// The notice of a change of members says only what is true now.
		added := q.Get("added") != ""
		id, _ := strconv.ParseInt(q.Get("added")+q.Get("removed"), 10, 64)
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		u, uerr := ws.GetUser(rq.ctx, id)
		groups, gerr := ws.ListUserGroups(rq.ctx, id)
		if uerr == nil && gerr == nil {
			member := false
			for _, g := range groups {
				member = member || g.ID == d.Group.ID
			}
			switch {
			case added && member:
				v.Notice = u.Username + " is a member of " + d.Group.Name + "."
			case !added && !member:
				v.Notice = u.Username + " is not a member of " + d.Group.Name + "."
			}
		}
	}
	h.render(rq, http.StatusOK, "group", v)
	return nil
}

func (h *Handler) groupView(rq *request) (*view, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return nil, err
	}
	g, err := ws.GetGroup(rq.ctx, id)
	if err != nil {
		return nil, err
	}
	offset := offsetOf(rq.r)
	members, err := ws.ListGroupMembers(rq.ctx, id, &identity.Page{Offset: offset, Limit: pageSize})
	if err != nil {
		return nil, err
	}
	roles, err := ws.ListGroupRoles(rq.ctx, id)
	if err != nil {
		return nil, err
	}
	d := groupData{Slug: ws.Slug(), Group: namedRow{g.ID, g.Name, g.Description}, Members: h.memberRows(ws.Slug(), members.Items),
		Links: linksOf(h.href("workspaces", ws.Slug(), "groups", id), nil, offset, len(members.Items), members.Total)}
	for _, r := range roles {
		d.Roles = append(d.Roles, namedRow{r.ID, r.Name, r.Description})
	}
	d.MemberQuery = strings.TrimSpace(rq.r.URL.Query().Get("member"))
	if d.MemberQuery != "" {
		found, err := ws.ListUsers(rq.ctx, d.MemberQuery, &identity.Page{Limit: candidateLimit})
		if identity.ErrorCode(err) == identity.CodeInvalid {
			found, err = identity.List[identity.User]{}, nil
		}
		if err != nil {
			return nil, err
		}
		d.Candidates, d.CandidatesTotal = h.memberRows(ws.Slug(), found.Items), found.Total
	}
	if rq.op.grants.can(ws.Slug(), true) {
		all, err := ws.ListRoles(rq.ctx, "", &identity.Page{Limit: roleChoices})
		if err != nil {
			return nil, err
		}
		for _, r := range all.Items {
			d.RoleNames = append(d.RoleNames, r.Name)
		}
	}
	return &view{Title: "Group " + g.Name, Workspace: ws.Slug(), Data: d}, nil
}

// memberAction reads the workspace, the group and the user of a
// membership's form or path.
func (h *Handler) memberAction(rq *request, user string) (*identity.Workspace, int64, int64, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, 0, 0, err
	}
	gid, err := pathID(rq, "id")
	if err != nil {
		return nil, 0, 0, err
	}
	uid, err := strconv.ParseInt(user, 10, 64)
	if err != nil || uid <= 0 {
		return nil, 0, 0, errBadForm
	}
	return ws, gid, uid, nil
}

// addMember makes the user of the form a member of the group.
func (h *Handler) addMember(rq *request) error {
	ws, gid, uid, err := h.memberAction(rq, rq.r.PostFormValue("user"))
	if err != nil {
		return err
	}
	if err := ws.AddGroupMember(rq.ctx, gid, uid); err != nil {
		if identity.ErrorCode(err) == identity.CodeLimitReached {
			return h.namedFormError(rq, groupKind, err)
		}
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "groups", gid)+"?added="+strconv.FormatInt(uid, 10), http.StatusSeeOther)
	return nil
}

// removeMember ends the membership of the path's user.
func (h *Handler) removeMember(rq *request) error {
	ws, gid, uid, err := h.memberAction(rq, rq.r.PathValue("user"))
	if err != nil {
		return err
	}
	if err := ws.RemoveGroupMember(rq.ctx, gid, uid); err != nil && identity.ErrorCode(err) != identity.CodeNotFound {
		return err
	} else if err != nil {
		// Not a member (any more): what the operator wanted is true, unless
		// the group or the user is gone.
		if _, gerr := ws.GetGroup(rq.ctx, gid); gerr != nil {
			return gerr
		}
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "groups", gid)+"?removed="+strconv.FormatInt(uid, 10), http.StatusSeeOther)
	return nil
}

// addGroupRole makes the group carry the role named in the form.
func (h *Handler) addGroupRole(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	gid, err := pathID(rq, "id")
	if err != nil {
		return err
	}
	name := strings.TrimSpace(rq.r.PostFormValue("role"))
	r, err := ws.GetRoleByName(rq.ctx, name)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		err = &identity.Error{Code: identity.CodeInvalid, Message: "no such role",
			Fields: []identity.FieldError{{Field: "role", Rule: identity.RuleUnknown, Message: "no role of this workspace has this name"}}}
	}
	if err == nil {
		err = ws.AssignGroupRole(rq.ctx, gid, r.ID)
	}
	switch identity.ErrorCode(err) {
	case "":
	case identity.CodeInvalid, identity.CodeLimitReached:
		return h.namedFormError(rq, groupKind, err)
	default:
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "groups", gid)+"#roles", http.StatusSeeOther)
	return nil
}

// removeGroupRole ends the group's role of the path.
func (h *Handler) removeGroupRole(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	gid, err := pathID(rq, "id")
	if err != nil {
		return err
	}
	rid, err := pathID(rq, "role")
	if err != nil {
		return err
	}
	if err := ws.RemoveGroupRole(rq.ctx, gid, rid); err != nil {
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "groups", gid)+"#roles", http.StatusSeeOther)
	return nil
}
