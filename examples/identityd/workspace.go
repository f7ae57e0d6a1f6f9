package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// workspaceCreate creates a workspace: identityd workspace create SLUG.
func workspaceCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	if err := parse(fs, args); err != nil {
		return err
	}
	pos, err := positional(fs, "SLUG")
	if err != nil {
		return err
	}
	slug := pos[0]
	if err := checkSlug(ctx, slug); err != nil {
		return err
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

// checkSlug reports an invalid slug before the database is opened, so that
// a typo neither creates an empty file nor waits for a locked one. The
// library's own rule decides, applied in a throwaway in-memory Service.
func checkSlug(ctx context.Context, slug string) error {
	svc, err := identity.New(memstore.New(), nil)
	if err != nil {
		return err
	}
	defer svc.Close()
	if _, err := svc.CreateWorkspace(ctx, slug, nil); errors.Is(err, identity.ErrInvalid) {
		return fmt.Errorf("invalid workspace slug %q: use 1-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit", slug)
	}
	return nil
}

// workspaceList prints every workspace: identityd workspace list.
func workspaceList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := positional(fs); err != nil {
		return err
	}
	svc, err := e.open(true, nil)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	list, err := svc.Workspaces(ctx)
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
