package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/identitylib/identity"
)

// Permanent deletion, which the REST API does not offer (its DELETE
// disables a user): of one user, for a right-to-erasure request, and of
// a whole workspace.

// userDelete deletes a user and every record of it:
// identityd user delete -workspace SLUG ID.
func userDelete(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the user belongs to")
	pos, err := parseCommand(fs, args, []string{"ID"}, "workspace")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id < 1 {
		return usagef(fs, "the user ID is a positive integer, not %q", pos[0])
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		d, err := ws.DeleteUserPermanently(ctx, id)
		if errors.Is(err, identity.ErrNotFound) {
			return fmt.Errorf("workspace %s has no user %d", *slug, id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted user %d (%s, %s) permanently, with:\n", d.User.ID, d.User.Username, d.User.Email)
		factor := "none"
		if d.SecondFactor {
			factor = "1, with its recovery codes"
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  attributes\t%d\n", d.Attributes)
		fmt.Fprintf(tw, "  roles\t%d\n", d.Roles)
		fmt.Fprintf(tw, "  groups\t%d\n", d.Groups)
		fmt.Fprintf(tw, "  sessions\t%d\n", d.Sessions)
		fmt.Fprintf(tw, "  grants\t%d, with their refresh tokens\n", d.Grants)
		fmt.Fprintf(tw, "  second factor\t%s\n", factor)
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "  and its authorization codes, verification and reset links, lockout state and queued emails")
		return nil
	})
}

// workspaceDelete deletes a workspace and every record of it:
// identityd workspace delete SLUG.
func workspaceDelete(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	pos, err := parseCommand(fs, args, []string{"SLUG"})
	if err != nil {
		return err
	}
	slug := pos[0]
	svc, err := e.open(true, nil)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	d, err := svc.DeleteWorkspace(ctx, slug)
	if errors.Is(err, identity.ErrNotFound) {
		return fmt.Errorf("workspace %q does not exist", slug)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "deleted workspace %s permanently, with:\n", d.Slug)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  users\t%d, with everything of theirs\n", d.Users)
	fmt.Fprintf(tw, "  roles\t%d\n", d.Roles)
	fmt.Fprintf(tw, "  groups\t%d, with their memberships\n", d.Groups)
	fmt.Fprintf(tw, "  webhooks\t%d, with their deliveries\n", d.Webhooks)
	fmt.Fprintf(tw, "  api keys\t%d\n", d.APIKeys)
	fmt.Fprintf(tw, "  clients\t%d\n", d.Clients)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "  and its settings, claim mappers, signing keys, tokens and queued emails")
	return nil
}
