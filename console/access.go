package console

import "strings"

// The roles of the operator workspace that grant access to the console.
// RoleAdmin and RoleViewer hold for every workspace; a role named
// RoleAdmin + ":" + SLUG or RoleViewer + ":" + SLUG holds for the
// workspace SLUG alone, and never for the operator workspace itself.
const (
	RoleAdmin  = "console.admin"
	RoleViewer = "console.viewer"
)

// WorkspaceRole returns the name of the role that grants role (RoleAdmin
// or RoleViewer) for the workspace slug alone: "console.admin:acme".
func WorkspaceRole(role, slug string) string { return role + ":" + slug }

// grants is what an operator may do, from the names of the roles they
// hold (directly or through their groups).
type grants struct {
	// opSlug is the operator workspace, which per-workspace roles never
	// reach.
	opSlug        string
	admin, viewer bool
	// adminOf and viewerOf hold the slugs of per-workspace roles.
	adminOf, viewerOf map[string]bool
}

// grantsOf reads the console's roles among the names of an operator's
// roles; role names are lowercase (the library's rule), and other roles
// are ignored.
func grantsOf(opSlug string, roleNames []string) grants {
	g := grants{opSlug: opSlug, adminOf: map[string]bool{}, viewerOf: map[string]bool{}}
	for _, name := range roleNames {
		switch {
		case name == RoleAdmin:
			g.admin = true
		case name == RoleViewer:
			g.viewer = true
		case strings.HasPrefix(name, RoleAdmin+":"):
			g.adminOf[strings.TrimPrefix(name, RoleAdmin+":")] = true
		case strings.HasPrefix(name, RoleViewer+":"):
			g.viewerOf[strings.TrimPrefix(name, RoleViewer+":")] = true
		}
	}
	return g
}

// any reports whether the operator holds any console role at all.
func (g grants) any() bool {
	return g.admin || g.viewer || len(g.adminOf) > 0 || len(g.viewerOf) > 0
}

// can is the console's one authorization rule: whether the operator may
// read (write false) or change (write true) the workspace slug, or, with
// slug "", what belongs to the whole service (creating and deleting
// workspaces, the list of every workspace). console.admin may do
// everything; console.viewer may read everything; console.admin:SLUG may
// read and change SLUG, console.viewer:SLUG read it; no per-workspace role
// reaches the operator workspace or the service.
func (g grants) can(slug string, write bool) bool {
	switch {
	case g.admin:
		return true
	case g.viewer && !write:
		return true
	case slug == "" || slug == g.opSlug:
		return false
	case write:
		return g.adminOf[slug]
	}
	return g.adminOf[slug] || g.viewerOf[slug]
}

// writesSomewhere reports whether the operator may change anything: the
// pages show no write controls to an operator who may not.
func (g grants) writesSomewhere() bool {
	return g.admin || len(g.adminOf) > 0
}
