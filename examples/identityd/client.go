package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/identitylib/identity"
)

// clientCreate registers an OAuth client and prints its id on the first
// line and, for a confidential client, its secret on the second, so that
// scripts can capture them: identityd client create -workspace SLUG
// -redirect-uri URI[,URI...] [-name NAME] [-public] [-grant-types ...]
// [-claims groups,roles] [-post-logout-redirect-uri URI[,URI...]].
func clientCreate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the client is for")
	uris := fs.String("redirect-uri", "", "comma-separated redirect `URIs`: https, or http on localhost or a loopback address; matched exactly")
	name := fs.String("name", "", "an optional `NAME` shown by client list")
	public := fs.Bool("public", false, "make a public client (a browser or native app): no secret; it proves itself with PKCE")
	grants := fs.String("grant-types", "", "comma-separated `GRANT_TYPES` among authorization_code, refresh_token and client_credentials\n(default authorization_code,refresh_token; client_credentials for a confidential client only)")
	claims := fs.String("claims", "", "comma-separated `CLAIMS` of the user's access that the client's tokens carry whatever scopes it asks\nfor: groups, roles (default none: only those its scopes ask for)")
	logoutURIs := fs.String("post-logout-redirect-uri", "", "comma-separated `URIs` the provider may send the browser to after a sign-out the client\n"+
		"asked for (post_logout_redirect_uri): https, or http on localhost or a loopback address; matched exactly (default none)")
	if _, err := parseCommand(fs, args, nil, "workspace", "redirect-uri"); err != nil {
		return err
	}
	nc := identity.NewClient{Name: *name, Public: *public, RedirectURIs: splitList(*uris)}
	if *logoutURIs != "" {
		nc.PostLogoutRedirectURIs = splitList(*logoutURIs)
	}
	if *grants != "" {
		for _, g := range splitList(*grants) {
			nc.GrantTypes = append(nc.GrantTypes, identity.GrantType(g))
		}
	}
	if *claims != "" {
		nc.Claims = splitList(*claims)
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		c, err := ws.CreateClient(ctx, nc)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, c.Client.ID)
		if c.Secret != "" {
			fmt.Fprintln(e.stdout, c.Secret)
		}
		return nil
	})
}

// splitList splits a comma-separated flag value, trimming white space
// around each entry.
func splitList(list string) []string {
	var out []string
	for s := range strings.SplitSeq(list, ",") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// clientList prints the workspace's OAuth clients without secrets:
// identityd client list -workspace SLUG.
func clientList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		clients, err := ws.ListClients(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTYPE\tGRANT_TYPES\tREDIRECT_URIS\tCREATED")
		for _, c := range clients {
			kind := "confidential"
			if c.Public {
				kind = "public"
			}
			grants := make([]string, len(c.GrantTypes))
			for i, g := range c.GrantTypes {
				grants[i] = string(g)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, orDash(c.Name), kind, strings.Join(grants, ","),
				strings.Join(c.RedirectURIs, ","), c.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// clientDelete removes an OAuth client, whose secret stops working at
// once: identityd client delete -workspace SLUG CLIENT_ID.
func clientDelete(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	return e.removeFromWorkspace(ctx, fs, args, removal{
		what: "client", idName: "CLIENT_ID", listCommand: "client list", done: "deleted client",
		remove: (*identity.Workspace).DeleteClient,
	})
}
