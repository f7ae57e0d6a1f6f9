package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/identitylib/identity"
)

// The commands of roles, and user roles, which shows what a user holds.
// A role is held directly (through the REST API or an import) or through
// a group that carries it (group grant, in group.go).

// roleCreate creates a role and prints its id, alone on its line, so that
// scripts can capture it: identityd role create -workspace SLUG NAME
// [-description TEXT].
func roleCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.createNamed(ctx, fs, args, "role", func(ws *identity.Workspace, name, description string) (int64, error) {
		r, err := ws.CreateRole(ctx, identity.NewRole{Name: name, Description: description})
		return r.ID, err
	})
}

// createNamed runs role create or group create: it parses -workspace,
// -description and NAME, creates the record with create and prints its
// id.
func (e *env) createNamed(ctx context.Context, fs *flag.FlagSet, args []string, what string,
	create func(ws *identity.Workspace, name, description string) (int64, error)) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the "+what+" is for")
	description := fs.String("description", "", "an optional description `TEXT`")
	pos, err := parseCommand(fs, args, []string{"NAME"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		id, err := create(ws, pos[0], *description)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, id)
		return nil
	})
}

// roleList prints the workspace's roles in id order:
// identityd role list -workspace SLUG.
func roleList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		roles, err := allPages(func(p *identity.Page) (identity.List[identity.Role], error) { return ws.ListRoles(ctx, "", p) })
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tDESCRIPTION")
		for _, r := range roles {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", r.ID, r.Name, oneLine(r.Description))
		}
		return tw.Flush()
	})
}

// allPages returns every item of a list that list returns page by page,
// each page read in a transaction of its own.
func allPages[T any](list func(*identity.Page) (identity.List[T], error)) ([]T, error) {
	var all []T
	for offset := 0; ; offset += identity.MaxPageLimit {
		page, err := list(&identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if len(page.Items) < identity.MaxPageLimit {
			return all, nil
		}
	}
}

// oneLine returns a description as one table cell: its runs of white
// space (a description may hold newlines and tabs) as one space, and "-"
// for none.
func oneLine(s string) string { return orDash(strings.Join(strings.Fields(s), " ")) }

// roleDelete deletes a role and, with it, every assignment of it, to
// users and to groups: identityd role delete -workspace SLUG ROLE.
func roleDelete(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the role belongs to")
	pos, err := parseCommand(fs, args, []string{"ROLE"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		r, err := roleRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		if err := ws.DeleteRole(ctx, r.id); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted role %s\n", r)
		return nil
	})
}

// userRoles prints the roles a user holds, each once, in role id order,
// with where it comes from: identityd user roles -workspace SLUG USER.
func userRoles(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the user belongs to")
	pos, err := parseCommand(fs, args, []string{"USER"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		u, err := userRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		roles, err := ws.ListUserRoles(ctx, u.ID)
		if err != nil {
			return err
		}
		return printUserRoles(e.stdout, roles)
	})
}

// printUserRoles prints the table of user roles: the role's id and name,
// and its sources, "direct" for a direct assignment and "group NAME" for
// each of the user's groups that carries it (a group may be named
// "direct").
func printUserRoles(w io.Writer, roles []identity.UserRole) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSOURCES")
	for _, r := range roles {
		var sources []string
		if r.Direct {
			sources = append(sources, "direct")
		}
		for _, g := range r.Groups {
			sources = append(sources, "group "+g.Name)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", r.ID, r.Name, strings.Join(sources, ", "))
	}
	return tw.Flush()
}
