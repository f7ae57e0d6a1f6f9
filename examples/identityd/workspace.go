package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/identitylib/identity"
)

// workspaceCreate creates a workspace: identityd workspace create SLUG.
func workspaceCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	pos, err := parseCommand(fs, args, []string{"SLUG"})
	if err != nil {
		return err
	}
	slug := pos[0]
	// The slug is checked before the database is opened, so that a typo
	// neither creates an empty file nor waits for a locked one.
	if identity.CheckSlug(slug) != nil {
		return fmt.Errorf("invalid workspace slug %q: use 1-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit", slug)
	}
	svc, err := e.open(false, nil)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	if _, err := svc.CreateWorkspace(ctx, slug, nil); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created workspace %s\n", slug)
	return nil
}

// workspaceList prints every workspace: identityd workspace list.
func workspaceList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	if _, err := parseCommand(fs, args, nil); err != nil {
		return err
	}
	svc, err := e.open(true, nil)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	list, err := svc.ListWorkspaces(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tCREATED")
	for _, ws := range list {
		fmt.Fprintf(tw, "%s\t%s\n", ws.Slug(), ws.CreatedAt().Format(time.RFC3339))
	}
	return tw.Flush()
}
