package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/identitylib/identity"
)

// userPasskeys lists a user's passkeys:
// identityd user passkeys -workspace SLUG USER.
func userPasskeys(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
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
		list, err := ws.ListPasskeys(ctx, u.ID)
		if err != nil {
			return err
		}
		return printPasskeys(e.stdout, list)
	})
}

// printPasskeys prints the table of a user's passkeys.
func printPasskeys(w io.Writer, list []identity.Passkey) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tLAST USED\tAUTHENTICATOR\tSYNCED")
	for _, p := range list {
		last := "-"
		if !p.LastUsedAt.IsZero() {
			last = p.LastUsedAt.UTC().Format(time.RFC3339)
		}
		authn := p.AuthenticatorName
		if authn == "" {
			authn = "-"
		}
		synced := "no"
		if p.BackupEligible {
			synced = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.CreatedAt.UTC().Format(time.RFC3339), last, authn, synced)
	}
	return tw.Flush()
}
