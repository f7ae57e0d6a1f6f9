package console

import (
	"context"
	"fmt"

	"github.com/identitylib/identity"
)

// Prepare makes the operator workspace ready for the console, creating
// what is missing and changing nothing that exists: the workspace
// (Options.OperatorWorkspace) with a second factor required of every
// user, so that every operator enrols one at their first sign-in; the
// console's OAuth client, public with PKCE, named ClientName, whose
// redirect URI is PublicURL + "callback" and post-logout redirect URI
// PublicURL (a client of that name for another PublicURL is left alone:
// delete it when the console moved); and the roles RoleAdmin and
// RoleViewer. Per-workspace roles (WorkspaceRole) are created when an
// operator is first given one (Invite). Prepare is safe to call on every
// start.
func (h *Handler) Prepare(ctx context.Context) error {
	ws, err := h.svc.GetWorkspace(ctx, h.opSlug)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		settings := identity.DefaultSettings()
		settings.MFA = identity.MFARequired
		ws, err = h.svc.CreateWorkspace(ctx, h.opSlug, &settings)
		if identity.ErrorCode(err) == identity.CodeConflict {
			ws, err = h.svc.GetWorkspace(ctx, h.opSlug)
		}
	}
	if err != nil {
		return fmt.Errorf("console: the operator workspace: %w", err)
	}
	clients, err := ws.ListClients(ctx)
	if err != nil {
		return fmt.Errorf("console: the console's client: %w", err)
	}
	found := false
	for _, c := range clients {
		found = found || h.isConsoleClient(c)
	}
	if !found {
		_, err := ws.CreateClient(ctx, identity.NewClient{
			Name: ClientName, Public: true, RedirectURIs: []string{h.redirectURI()},
			PostLogoutRedirectURIs: []string{h.publicURL}, GrantTypes: []identity.GrantType{identity.GrantAuthorizationCode},
		})
		if err != nil {
			return fmt.Errorf("console: creating the console's client: %w", err)
		}
	}
	for _, name := range []string{RoleAdmin, RoleViewer} {
		if _, err := ensureRole(ctx, ws, name); err != nil {
			return err
		}
	}
	return nil
}

// roleDescriptions describe the console's roles where they are created.
var roleDescriptions = map[string]string{
	RoleAdmin:  "Identity console: may read and change every workspace.",
	RoleViewer: "Identity console: may read every workspace, change nothing.",
}

// ensureRole returns the role named name of the operator workspace,
// created when missing.
func ensureRole(ctx context.Context, ws *identity.Workspace, name string) (identity.Role, error) {
	r, err := ws.GetRoleByName(ctx, name)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		desc, ok := roleDescriptions[name]
		if !ok {
			desc = "Identity console: access to one workspace."
		}
		r, err = ws.CreateRole(ctx, identity.NewRole{Name: name, Description: desc})
		if identity.ErrorCode(err) == identity.CodeConflict {
			r, err = ws.GetRoleByName(ctx, name)
		}
	}
	if err != nil {
		return identity.Role{}, fmt.Errorf("console: the role %s: %w", name, err)
	}
	return r, nil
}
