package console

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/identitylib/identity"
)

// pendingEmailDomain is the domain of the placeholder address of an
// operator invited without one (RFC 2606 reserves .invalid): the
// operator gives their own on the setup page.
const pendingEmailDomain = "@operators.invalid"

// FirstOperator is the placeholder username of an operator invited
// without one (Invite with username ""), which they replace on the setup
// page.
const FirstOperator = "admin"

// Invite makes username an operator with the roles given (RoleAdmin,
// RoleViewer, or WorkspaceRole of either; at least one) and returns a
// one-time setup link, valid for identity.AccountSetupLifetime (1 hour),
// on which they choose their password, email and full name; their first
// sign-in then makes them enrol a second factor (the operator workspace
// requires one). A new operator is created disabled until the setup is
// done. For an existing user of the operator workspace, the roles are
// added and a new link issued: it replaces their password when used, the
// way back in for an operator who lost theirs. Per-workspace roles are
// created in the operator workspace when missing. Prepare must have run.
// The audit trail records every step with ctx's actor.
//
// With username "" (the first run), the operator is created as
// FirstOperator and chooses their username on the setup page too; a
// FirstOperator who can sign in already is an error then.
func (h *Handler) Invite(ctx context.Context, username string, roles ...string) (link string, err error) {
	chooseUsername := username == ""
	if chooseUsername {
		username = FirstOperator
	}
	if len(roles) == 0 {
		return "", fmt.Errorf("console: Invite needs at least one role")
	}
	for _, r := range roles {
		if err := checkConsoleRole(r); err != nil {
			return "", err
		}
	}
	ws, err := h.operatorWorkspace(ctx)
	if err != nil {
		return "", fmt.Errorf("console: the operator workspace (has Prepare run?): %w", err)
	}
	u, found, err := findUser(ctx, ws, username)
	if err != nil {
		return "", err
	}
	if found && chooseUsername && u.Enabled {
		return "", fmt.Errorf("console: the operator %s exists: name the operator to invite", FirstOperator)
	}
	if !found {
		u, err = ws.CreateUser(ctx, identity.NewUser{
			Username: username, Email: username + pendingEmailDomain, FullName: username, Password: randomText(32),
		})
		if err != nil {
			return "", err
		}
		if err := ws.DisableUser(ctx, u.ID); err != nil {
			return "", err
		}
	}
	for _, name := range roles {
		role, err := ensureRole(ctx, ws, name)
		if err != nil {
			return "", err
		}
		if err := ws.AssignRole(ctx, u.ID, role.ID); err != nil {
			return "", err
		}
	}
	setup, err := ws.CreateAccountSetup(ctx, u.ID, &identity.AccountSetupOptions{ChooseUsername: chooseUsername})
	if err != nil {
		return "", err
	}
	return h.publicURL + "setup?" + url.Values{"token": {setup.Token}}.Encode(), nil
}

// checkConsoleRole refuses a name that is not a console role.
func checkConsoleRole(name string) error {
	if name == RoleAdmin || name == RoleViewer {
		return nil
	}
	for _, base := range []string{RoleAdmin, RoleViewer} {
		if slug, ok := strings.CutPrefix(name, base+":"); ok {
			if err := identity.CheckSlug(slug); err != nil {
				return fmt.Errorf("console: role %q: %w", name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("console: %q is not a console role (%s, %s, or either followed by :SLUG)", name, RoleAdmin, RoleViewer)
}

// findUser returns the user of ws whose username is username, ignoring
// case, through the library's prefix search.
func findUser(ctx context.Context, ws *identity.Workspace, username string) (identity.User, bool, error) {
	for offset := 0; ; {
		list, err := ws.ListUsers(ctx, username, &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return identity.User{}, false, err
		}
		for _, u := range list.Items {
			if strings.EqualFold(u.Username, username) {
				return u, true, nil
			}
		}
		offset += len(list.Items)
		if len(list.Items) == 0 || offset >= list.Total {
			return identity.User{}, false, nil
		}
	}
}

// HasOperator reports whether the operator workspace has an operator who
// can sign in: an enabled user holding RoleAdmin, directly or through a
// group (an invited operator is disabled until their setup is done).
// identityd serve prints a setup link on a database without one.
func (h *Handler) HasOperator(ctx context.Context) (bool, error) {
	ws, err := h.operatorWorkspace(ctx)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	role, err := ws.GetRoleByName(ctx, RoleAdmin)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for offset := 0; ; {
		list, err := ws.ListRoleHolders(ctx, role.ID, &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return false, err
		}
		for _, u := range list.Items {
			if u.Enabled {
				return true, nil
			}
		}
		offset += len(list.Items)
		if len(list.Items) == 0 || offset >= list.Total {
			return false, nil
		}
	}
}
