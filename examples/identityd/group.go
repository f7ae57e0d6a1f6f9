package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/identitylib/identity"
)

// The commands of groups: a group has users as members and carries
// roles, which its members hold as long as they are members.

// groupCreate creates a group and prints its id, alone on its line:
// identityd group create -workspace SLUG NAME [-description TEXT].
func groupCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.createNamed(ctx, fs, args, "group", func(ws *identity.Workspace, name, description string) (int64, error) {
		g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: name, Description: description})
		return g.ID, err
	})
}

// groupList prints the workspace's groups in id order, each with its
// number of members and the roles it carries:
// identityd group list -workspace SLUG.
func groupList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		groups, err := allPages(func(p *identity.Page) (identity.List[identity.Group], error) { return ws.ListGroups(ctx, "", p) })
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tMEMBERS\tROLES\tDESCRIPTION")
		for _, g := range groups {
			// The store keeps each group's count of members, so the
			// page of one member costs one read beside it.
			members, err := ws.ListGroupMembers(ctx, g.ID, &identity.Page{Limit: 1})
			if errors.Is(err, identity.ErrNotFound) {
				continue // deleted since the page of groups was read
			}
			if err != nil {
				return err
			}
			roles, err := ws.ListGroupRoles(ctx, g.ID)
			if errors.Is(err, identity.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			names := make([]string, len(roles))
			for i, r := range roles {
				names[i] = r.Name
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", g.ID, g.Name, members.Total, orDash(strings.Join(names, ",")), oneLine(g.Description))
		}
		return tw.Flush()
	})
}

// groupDelete deletes a group with its memberships and the roles it
// carries: identityd group delete -workspace SLUG GROUP.
func groupDelete(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the group belongs to")
	pos, err := parseCommand(fs, args, []string{"GROUP"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		g, err := groupRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		if err := ws.DeleteGroup(ctx, g.id); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted group %s\n", g)
		return nil
	})
}

// groupAdd makes a user a member of a group:
// identityd group add -workspace SLUG GROUP USER. Adding a member again
// succeeds.
func groupAdd(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.groupMember(ctx, fs, args, func(ws *identity.Workspace, g named, u identity.User) (string, error) {
		if err := ws.AddGroupMember(ctx, g.id, u.ID); err != nil {
			return "", err
		}
		return fmt.Sprintf("user %s is a member of group %s", userLabel(u), g), nil
	})
}

// groupRemove ends a user's membership of a group:
// identityd group remove -workspace SLUG GROUP USER.
func groupRemove(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.groupMember(ctx, fs, args, func(ws *identity.Workspace, g named, u identity.User) (string, error) {
		err := ws.RemoveGroupMember(ctx, g.id, u.ID)
		if errors.Is(err, identity.ErrNotFound) {
			// Both were found a moment ago: the user is no member.
			return "", fmt.Errorf("user %s is not a member of group %s", userLabel(u), g)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("user %s is no longer a member of group %s", userLabel(u), g), nil
	})
}

// groupMember runs group add or group remove: it parses -workspace, GROUP
// and USER, resolves them, and prints what change returns.
func (e *env) groupMember(ctx context.Context, fs *flag.FlagSet, args []string,
	change func(ws *identity.Workspace, g named, u identity.User) (string, error)) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the group belongs to")
	pos, err := parseCommand(fs, args, []string{"GROUP", "USER"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		g, err := groupRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		u, err := userRef(ctx, ws, *slug, pos[1])
		if err != nil {
			return err
		}
		done, err := change(ws, g, u)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, done)
		return nil
	})
}

// groupGrant makes a group carry a role, which its members hold from
// then on: identityd group grant -workspace SLUG GROUP ROLE. Granting a
// role the group carries succeeds.
func groupGrant(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.groupRole(ctx, fs, args, func(ws *identity.Workspace, g, r named) (string, error) {
		if err := ws.AssignGroupRole(ctx, g.id, r.id); err != nil {
			return "", err
		}
		return fmt.Sprintf("group %s carries role %s", g, r), nil
	})
}

// groupRevoke ends a group's role: its members no longer hold it through
// the group: identityd group revoke -workspace SLUG GROUP ROLE.
func groupRevoke(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.groupRole(ctx, fs, args, func(ws *identity.Workspace, g, r named) (string, error) {
		err := ws.RemoveGroupRole(ctx, g.id, r.id)
		if errors.Is(err, identity.ErrNotFound) {
			// Both were found a moment ago: the group does not carry it.
			return "", fmt.Errorf("group %s does not carry role %s", g, r)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("group %s no longer carries role %s", g, r), nil
	})
}

// groupRole runs group grant or group revoke: it parses -workspace, GROUP
// and ROLE, resolves them, and prints what change returns.
func (e *env) groupRole(ctx context.Context, fs *flag.FlagSet, args []string,
	change func(ws *identity.Workspace, g, r named) (string, error)) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the group belongs to")
	pos, err := parseCommand(fs, args, []string{"GROUP", "ROLE"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		g, err := groupRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		r, err := roleRef(ctx, ws, *slug, pos[1])
		if err != nil {
			return err
		}
		done, err := change(ws, g, r)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, done)
		return nil
	})
}
