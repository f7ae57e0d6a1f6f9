package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// The operator console (package console), which serve mounts at
// /console/ unless -console=false, and its operators: users of the
// workspace "operators", invited with a one-time setup link.

// startConsole builds the console of svc for serve, prepares its
// operator workspace and, when no operator can sign in yet, logs one line
// with a setup link for the first operator (console.admin), who chooses
// their username on it; valid for an hour, each start without an
// operator issues a new one.
func startConsole(ctx context.Context, svc *identity.Service, logger *slog.Logger) (*console.Handler, error) {
	h, err := console.New(svc, &console.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := h.Prepare(ctx); err != nil {
		return nil, err
	}
	has, err := h.HasOperator(ctx)
	if err != nil {
		return nil, err
	}
	if !has {
		link, err := h.Invite(ctx, "", console.RoleAdmin)
		if err != nil {
			return nil, err
		}
		logger.Info("no console operator yet: set up the first one within an hour at", "link", link)
	}
	return h, nil
}

// errNoConsole is operator create run without a serve whose console it
// can use.
var errNoConsole = errors.New("operator create runs in identityd serve, whose console makes the link: start serve (without -console=false) and run it again")

// operatorCreate makes USERNAME an operator of the console and prints
// their one-time setup link: identityd operator create USERNAME [-viewer]
// [-workspace SLUG]. It runs in serve, through the admin socket.
func operatorCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	viewer := fs.Bool("viewer", false, "read only: the role console.viewer instead of console.admin")
	slug := fs.String("workspace", "", "for the workspace `SLUG` alone: console.admin:SLUG (console.viewer:SLUG with -viewer)")
	pos, err := parseCommand(fs, args, []string{"USERNAME"})
	if err != nil {
		return err
	}
	if e.server == nil || e.server.console == nil {
		return errNoConsole
	}
	role := console.RoleAdmin
	if *viewer {
		role = console.RoleViewer
	}
	if *slug != "" {
		if _, err := e.server.svc.GetWorkspace(ctx, *slug); err != nil {
			return fmt.Errorf("-workspace %s: %w", *slug, err)
		}
		role = console.WorkspaceRole(role, *slug)
	}
	link, err := e.server.console.Invite(ctx, pos[0], role)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, link)
	return nil
}
