package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/identitylib/identity"
)

// keyCreate issues an API key and prints only the key, on one line, so that
// scripts can capture it: identityd key create -workspace SLUG -scopes ...
func keyCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the key is for")
	scopeList := fs.String("scopes", "", "comma-separated `SCOPES` the key grants (see identityd -h)")
	name := fs.String("name", "", "an optional `NAME` shown by key list")
	if _, err := parseCommand(fs, args, nil, "workspace", "scopes"); err != nil {
		return err
	}
	// Scopes are checked before the database is opened, so that a typo
	// fails the same way whether or not the file exists or is in use.
	scopes, err := parseScopes(*scopeList)
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		created, err := ws.CreateAPIKey(ctx, *name, scopes)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, created.Secret)
		return nil
	})
}

// parseScopes parses a comma-separated list of scopes, reporting every
// unknown one.
func parseScopes(list string) ([]identity.Scope, error) {
	var scopes []identity.Scope
	var unknown []string
	for s := range strings.SplitSeq(list, ",") {
		scope := identity.Scope(strings.TrimSpace(s))
		if !scope.Known() {
			unknown = append(unknown, fmt.Sprintf("%q", scope))
		}
		scopes = append(scopes, scope)
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(identity.Scopes()))
		for _, s := range identity.Scopes() {
			known = append(known, string(s))
		}
		return nil, fmt.Errorf("unknown scope %s (known scopes: %s)", strings.Join(unknown, ", "), strings.Join(known, ","))
	}
	return scopes, nil
}

// keyList prints the workspace's keys without their secrets:
// identityd key list -workspace SLUG.
func keyList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		keys, err := ws.ListAPIKeys(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED")
		for _, k := range keys {
			scopes := make([]string, len(k.Scopes))
			for i, s := range k.Scopes {
				scopes[i] = string(s)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, orDash(k.Name), strings.Join(scopes, ","), k.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// keyRevoke deletes a key, which stops working at once:
// identityd key revoke -workspace SLUG ID.
func keyRevoke(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	return e.removeFromWorkspace(ctx, fs, args, removal{
		what: "api key", idName: "ID", listCommand: "key list", done: "revoked api key",
		remove: (*identity.Workspace).RevokeAPIKey,
	})
}

// removal describes a command that removes one thing of a workspace by
// its id: identityd ... -workspace SLUG ID.
type removal struct {
	what, idName, listCommand, done string
	remove                          func(*identity.Workspace, context.Context, string) error
}

// removeFromWorkspace runs a removal command: it parses -workspace and
// the id, removes the thing, and says so, or names the list command when
// there is no such thing.
func (e *env) removeFromWorkspace(ctx context.Context, fs *flag.FlagSet, args []string, r removal) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the "+r.what+" belongs to")
	pos, err := parseCommand(fs, args, []string{r.idName}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		err := r.remove(ws, ctx, pos[0])
		if errors.Is(err, identity.ErrNotFound) {
			return fmt.Errorf("workspace %s has no %s %q (see identityd %s -workspace %s)", *slug, r.what, pos[0], r.listCommand, *slug)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s\n", r.done, pos[0])
		return nil
	})
}

// orDash returns s, or "-" for an empty s so that table columns stay
// aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
