package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// The arguments that name a role, a group or a user. A ROLE or GROUP
// argument of digits only is an id, anything else a name (a role or group
// whose name is all digits is named by its id: an id is what never
// changes). A USER argument of digits only is an id, one with "@" an
// email address, anything else a username. Each resolves to the record,
// or to an error that says which workspace has no such thing.

// refsHelp documents the arguments that name a role, a group or a user;
// the -h of the commands that take them prints it after the flags.
const refsHelp = `A ROLE or GROUP is its id (digits only) or its name; a USER is its id,
its email address (with "@") or its username. Flags may also follow the
arguments; "--" ends the flags, for an argument that starts with "-".
`

// allDigits reports whether s is a non-empty string of ASCII digits.
func allDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// named is what refs need of a role or a group.
type named struct {
	id   int64
	name string
}

// String is how a command's output names the record: "3 (admin)".
func (n named) String() string { return fmt.Sprintf("%d (%s)", n.id, n.name) }

// namedRef resolves a ROLE or GROUP argument with byID and byName.
func namedRef(ctx context.Context, slug, what, arg string,
	byID func(context.Context, int64) (named, error), byName func(context.Context, string) (named, error)) (named, error) {
	var n named
	var err error
	shown := strconv.Quote(arg)
	if allDigits(arg) {
		shown = arg
		id, perr := strconv.ParseInt(arg, 10, 64)
		if perr != nil {
			err = identity.ErrNotFound // too large to be any record's id
		} else {
			n, err = byID(ctx, id)
		}
	} else {
		n, err = byName(ctx, arg)
	}
	if errors.Is(err, identity.ErrNotFound) {
		return named{}, fmt.Errorf("workspace %s has no %s %s (see identityd %s list -workspace %s)", slug, what, shown, what, slug)
	}
	return n, err
}

// roleRef resolves a ROLE argument of the workspace slug.
func roleRef(ctx context.Context, ws *identity.Workspace, slug, arg string) (named, error) {
	return namedRef(ctx, slug, "role", arg,
		func(ctx context.Context, id int64) (named, error) {
			r, err := ws.GetRole(ctx, id)
			return named{r.ID, r.Name}, err
		},
		func(ctx context.Context, name string) (named, error) {
			r, err := ws.GetRoleByName(ctx, name)
			return named{r.ID, r.Name}, err
		})
}

// groupRef resolves a GROUP argument of the workspace slug.
func groupRef(ctx context.Context, ws *identity.Workspace, slug, arg string) (named, error) {
	return namedRef(ctx, slug, "group", arg,
		func(ctx context.Context, id int64) (named, error) {
			g, err := ws.GetGroup(ctx, id)
			return named{g.ID, g.Name}, err
		},
		func(ctx context.Context, name string) (named, error) {
			g, err := ws.GetGroupByName(ctx, name)
			return named{g.ID, g.Name}, err
		})
}

// userRef resolves a USER argument of the workspace slug: by id, email
// address or username, each compared as the workspace keeps them unique
// (ignoring case). The library looks users up by id only, so a username
// or email is found among the users its search (a prefix of the
// username, email or full name) returns, page by page until the one
// that matches exactly.
func userRef(ctx context.Context, ws *identity.Workspace, slug, arg string) (identity.User, error) {
	if allDigits(arg) {
		id, err := strconv.ParseInt(arg, 10, 64)
		if err == nil {
			var u identity.User
			if u, err = ws.GetUser(ctx, id); err == nil || !errors.Is(err, identity.ErrNotFound) {
				return u, err
			}
		}
		return identity.User{}, fmt.Errorf("workspace %s has no user %s", slug, arg)
	}
	byEmail := strings.Contains(arg, "@")
	for offset := 0; ; offset += identity.MaxPageLimit {
		page, err := ws.ListUsers(ctx, arg, &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return identity.User{}, err
		}
		for _, u := range page.Items {
			if byEmail && strings.EqualFold(u.Email, arg) || !byEmail && strings.EqualFold(u.Username, arg) {
				return u, nil
			}
		}
		if len(page.Items) < identity.MaxPageLimit {
			break
		}
	}
	if byEmail {
		return identity.User{}, fmt.Errorf("workspace %s has no user with email %q", slug, arg)
	}
	return identity.User{}, fmt.Errorf("workspace %s has no user with username %q", slug, arg)
}

// userLabel is how a command's output names a user: "5 (bob)".
func userLabel(u identity.User) string { return fmt.Sprintf("%d (%s)", u.ID, u.Username) }
