package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// The output of client create: the id, and for a confidential client the
// secret on a line of its own.
var (
	confidentialPattern = regexp.MustCompile(`^(idc_[0-9a-f]{16})\n(idcs_[A-Za-z0-9_-]{43})\n$`)
	publicPattern       = regexp.MustCompile(`^(idc_[0-9a-f]{16})\n$`)
)

// createClient runs client create and returns the id and secret it printed
// (no secret for a public client).
func createClient(t *testing.T, db string, args ...string) (id, secret string) {
	t.Helper()
	r := mustRun(t, append([]string{"-db", db, "client", "create", "-workspace", "acme"}, args...)...)
	if r.stderr != "" {
		t.Errorf("client create: stderr %q, want nothing", r.stderr)
	}
	if m := confidentialPattern.FindStringSubmatch(r.stdout); m != nil {
		return m[1], m[2]
	}
	if m := publicPattern.FindStringSubmatch(r.stdout); m != nil {
		return m[1], ""
	}
	t.Fatalf("client create printed %q, want the id and, for a confidential client, the secret", r.stdout)
	return "", ""
}

// storedClient reads a client from the database, which must not be in use.
func storedClient(t *testing.T, db, id string) (c identity.OAuthClient) {
	t.Helper()
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		var err error
		if c, err = ws.GetClient(ctx, id); err != nil {
			t.Fatalf("Client(%q): %v", id, err)
		}
	})
	return c
}

// authenticate checks a client's credentials against the database.
func authenticate(t *testing.T, db, id, secret string) (err error) {
	t.Helper()
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		_, err = ws.AuthenticateClient(ctx, id, secret)
	})
	return err
}

func TestClientCreate(t *testing.T) {
	db, _ := newDB(t)
	ignoreCreated := cmpopts.IgnoreFields(identity.OAuthClient{}, "CreatedAt")
	tests := []struct {
		name       string
		args       []string
		want       identity.OAuthClient // without ID
		withSecret bool
	}{
		{"confidential, defaults", []string{"-redirect-uri", "https://app.example.com/cb, http://localhost:8080/cb", "-name", "Web app"},
			identity.OAuthClient{Name: "Web app", RedirectURIs: []string{"https://app.example.com/cb", "http://localhost:8080/cb"},
				PostLogoutRedirectURIs: []string{}, GrantTypes: []identity.GrantType{"authorization_code", "refresh_token"}, Claims: []string{}}, true},
		{"public", []string{"-public", "-redirect-uri", "http://127.0.0.1:51234/cb", "-grant-types", "authorization_code"},
			identity.OAuthClient{Public: true, RedirectURIs: []string{"http://127.0.0.1:51234/cb"},
				PostLogoutRedirectURIs: []string{}, GrantTypes: []identity.GrantType{"authorization_code"}, Claims: []string{}}, false},
		{"public, defaults", []string{"-redirect-uri", "https://spa.example.com/", "-public"},
			identity.OAuthClient{Public: true, RedirectURIs: []string{"https://spa.example.com/"},
				PostLogoutRedirectURIs: []string{}, GrantTypes: []identity.GrantType{"authorization_code", "refresh_token"}, Claims: []string{}}, false},
		{"client credentials", []string{"-redirect-uri", "https://svc.example.com/cb", "-grant-types", "client_credentials"},
			identity.OAuthClient{RedirectURIs: []string{"https://svc.example.com/cb"},
				PostLogoutRedirectURIs: []string{}, GrantTypes: []identity.GrantType{"client_credentials"}, Claims: []string{}}, true},
		{"every grant type", []string{"-redirect-uri=https://app.example.com/cb", "-grant-types=authorization_code,refresh_token,client_credentials"},
			identity.OAuthClient{RedirectURIs: []string{"https://app.example.com/cb"}, PostLogoutRedirectURIs: []string{},
				GrantTypes: []identity.GrantType{"authorization_code", "refresh_token", "client_credentials"}, Claims: []string{}}, true},
		{"claims", []string{"-redirect-uri", "https://app.example.com/cb", "-claims", "roles, groups"},
			identity.OAuthClient{RedirectURIs: []string{"https://app.example.com/cb"}, PostLogoutRedirectURIs: []string{},
				GrantTypes: []identity.GrantType{"authorization_code", "refresh_token"}, Claims: []string{"roles", "groups"}}, true},
		{"public, one claim", []string{"-public", "-claims=groups", "-redirect-uri", "http://localhost/cb"},
			identity.OAuthClient{Public: true, RedirectURIs: []string{"http://localhost/cb"}, PostLogoutRedirectURIs: []string{},
				GrantTypes: []identity.GrantType{"authorization_code", "refresh_token"}, Claims: []string{"groups"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, secret := createClient(t, db, tt.args...)
			if (secret != "") != tt.withSecret {
				t.Errorf("secret %q; want one: %v", secret, tt.withSecret)
			}
			want := tt.want
			want.ID = id
			if diff := cmp.Diff(want, storedClient(t, db, id), ignoreCreated); diff != "" {
				t.Errorf("the stored client (-want +got):\n%s", diff)
			}
			err := authenticate(t, db, id, secret)
			if tt.withSecret && err != nil {
				t.Errorf("the printed secret does not authenticate: %v", err)
			}
			if !tt.withSecret && !errors.Is(err, identity.ErrUnauthenticated) {
				t.Errorf("a public client authenticated: %v", err)
			}
		})
	}
}

func TestClientCreateErrors(t *testing.T) {
	db, _ := newDB(t)
	missing := filepath.Join(t.TempDir(), "missing.db")
	const cb = "https://app.example.com/cb"
	usage := "Usage: identityd [-db FILE] client create -workspace SLUG -redirect-uri URI[,URI...] [-name NAME] [-public] " +
		"[-grant-types authorization_code,refresh_token,client_credentials] [-claims groups,roles] [-post-logout-redirect-uri URI[,URI...]]\nRun 'identityd -h' for help.\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // exact, unless prefixed "~": a substring
	}{
		{"http on a public host", []string{"-workspace", "acme", "-redirect-uri", "http://app.example.com/cb"}, exitError,
			"identityd: invalid client: redirectUris[0] may use http only for localhost or a loopback address\n"},
		{"every problem", []string{"-workspace", "acme", "-redirect-uri", cb + "#x,ftp://app.example.com/," + cb + "," + cb, "-name", "a\tb"}, exitError,
			"identityd: invalid client: name must not contain control characters; redirectUris[0] must not contain a fragment; " +
				"redirectUris[1] must be an https URL; redirectUris[3] URI \"https://app.example.com/cb\" is listed twice\n"},
		{"empty entry", []string{"-workspace", "acme", "-redirect-uri", cb + ","}, exitError,
			"identityd: invalid client: redirectUris[1] is required\n"},
		{"public with client_credentials", []string{"-workspace", "acme", "-redirect-uri", cb, "-public", "-grant-types", "client_credentials"}, exitError,
			"identityd: invalid client: grantTypes[0] \"client_credentials\" needs a confidential client: a public client has no secret\n"},
		{"refresh_token alone", []string{"-workspace", "acme", "-redirect-uri", cb, "-grant-types", "refresh_token"}, exitError,
			"identityd: invalid client: grantTypes[0] \"refresh_token\" needs \"authorization_code\" as well\n"},
		{"unknown grant type", []string{"-workspace", "acme", "-redirect-uri", cb, "-grant-types", "authorization_code,password"}, exitError,
			"identityd: invalid client: grantTypes[1] unknown grant type \"password\" (known: authorization_code, refresh_token, client_credentials)\n"},
		{"unknown claim", []string{"-workspace", "acme", "-redirect-uri", cb, "-claims", "groups,email"}, exitError,
			"identityd: invalid client: claims[1] unknown claim \"email\" (known: groups, roles)\n"},
		{"claim twice", []string{"-workspace", "acme", "-redirect-uri", cb, "-claims", "roles,roles"}, exitError,
			"identityd: invalid client: claims[1] claim \"roles\" is listed twice\n"},
		{"empty claim", []string{"-workspace", "acme", "-redirect-uri", cb, "-claims", "roles,"}, exitError,
			"identityd: invalid client: claims[1] unknown claim \"\" (known: groups, roles)\n"},
		{"unknown workspace", []string{"-workspace", "nope", "-redirect-uri", cb}, exitError, "identityd: workspace \"nope\" does not exist\n"},
		{"missing workspace", []string{"-redirect-uri", cb}, exitUsage, "identityd: client create: -workspace is required\n" + usage},
		{"missing redirect URI", []string{"-workspace", "acme"}, exitUsage, "identityd: client create: -redirect-uri is required\n" + usage},
		{"extra argument", []string{"-workspace", "acme", "-redirect-uri", cb, "x"}, exitUsage,
			"identityd: client create: unexpected argument \"x\"\n" + usage},
		{"unknown flag", []string{"-workspace", "acme", "-redirect-uris", cb}, exitUsage, "~flag provided but not defined: -redirect-uris\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "client", "create"}, tt.args...)...)
			sub, partial := strings.CutPrefix(tt.stderr, "~")
			if r.code != tt.code || r.stdout != "" || partial && !strings.Contains(r.stderr, sub) || !partial && r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	if r := mustRun(t, "-db", db, "client", "list", "-workspace", "acme"); strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("refused creations stored clients:\n%s", r.stdout)
	}
	t.Run("missing database", func(t *testing.T) {
		r := runCmd(t, "-db", missing, "client", "create", "-workspace", "acme", "-redirect-uri", cb)
		if r.code != exitError || !strings.Contains(r.stderr, "database "+missing+" does not exist") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("client create created the database file (stat: %v)", err)
		}
	})
}

func TestClientListAndDelete(t *testing.T) {
	db, _ := newDB(t)
	r := mustRun(t, "-db", db, "client", "list", "-workspace", "acme")
	if strings.Join(strings.Fields(r.stdout), " ") != "ID NAME TYPE GRANT_TYPES REDIRECT_URIS CREATED" {
		t.Errorf("client list of no clients:\n%s", r.stdout)
	}
	conf, secret := createClient(t, db, "-name", "web", "-redirect-uri", "https://app.example.com/cb,https://app.example.com/cb2")
	pub, _ := createClient(t, db, "-public", "-redirect-uri", "http://[::1]:8080/cb", "-grant-types", "authorization_code")

	r = mustRun(t, "-db", db, "client", "list", "-workspace", "acme")
	if strings.Contains(r.stdout, secret[len("idcs_"):]) {
		t.Fatalf("client list shows the secret:\n%s", r.stdout)
	}
	rows := map[string]string{
		conf: conf + " web confidential authorization_code,refresh_token https://app.example.com/cb,https://app.example.com/cb2",
		pub:  pub + " - public authorization_code http://[::1]:8080/cb",
	}
	first, second := conf, pub
	if pub < conf {
		first, second = pub, conf
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got []string
	for _, l := range lines[min(1, len(lines)):] {
		f := strings.Fields(l)
		if len(f) != 6 {
			t.Fatalf("client list row %q: want 6 columns", l)
		}
		got = append(got, strings.Join(f[:5], " ")) // without the time
	}
	if diff := cmp.Diff([]string{rows[first], rows[second]}, got); diff != "" {
		t.Errorf("client list rows, in id order (-want +got):\n%s", diff)
	}

	r = mustRun(t, "-db", db, "client", "delete", "-workspace", "acme", conf)
	if r.stdout != "deleted client "+conf+"\n" || r.stderr != "" {
		t.Errorf("client delete printed %q, %q", r.stdout, r.stderr)
	}
	if err := authenticate(t, db, conf, secret); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("the deleted client authenticates: %v", err)
	}
	r = mustRun(t, "-db", db, "client", "list", "-workspace", "acme")
	if strings.Contains(r.stdout, conf) || !strings.Contains(r.stdout, pub) {
		t.Errorf("client list after the delete:\n%s", r.stdout)
	}

	want := "identityd: workspace acme has no client \"" + conf + "\" (see identityd client list -workspace acme)\n"
	if r := runCmd(t, "-db", db, "client", "delete", "-workspace", "acme", conf); r.code != exitError || r.stderr != want {
		t.Errorf("second delete: exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitError, want)
	}
	if r := runCmd(t, "-db", db, "client", "delete", "-workspace", "acme"); r.code != exitUsage ||
		!strings.HasPrefix(r.stderr, "identityd: client delete: missing CLIENT_ID\n") {
		t.Errorf("delete without CLIENT_ID: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "client", "delete", pub); r.code != exitUsage ||
		!strings.HasPrefix(r.stderr, "identityd: client delete: -workspace is required\n") {
		t.Errorf("delete without -workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "client", "list"); r.code != exitUsage {
		t.Errorf("list without -workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "client", "list", "-workspace", "nope"); r.code != exitError ||
		r.stderr != "identityd: workspace \"nope\" does not exist\n" {
		t.Errorf("list of an unknown workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "client"); r.code != exitUsage || !strings.Contains(r.stderr, "\"client\" needs a subcommand") {
		t.Errorf("client alone: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestClientPostgres runs the client commands against a PostgreSQL URL
// while serve runs on the same database.
func TestClientPostgres(t *testing.T) {
	db := pgtest.URL(t)
	mustRun(t, "-db", db, "workspace", "create", "acme")
	_, log, stop := serveInProcess(t, db)
	id, secret := createClient(t, db, "-redirect-uri", "https://app.example.com/cb", "-name", "pg")
	if secret == "" {
		t.Fatal("a confidential client got no secret")
	}
	if err := authenticate(t, db, id, secret); err != nil {
		t.Errorf("the printed secret does not authenticate: %v", err)
	}
	if r := mustRun(t, "-db", db, "client", "list", "-workspace", "acme"); !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), id+" pg confidential ") {
		t.Errorf("client list:\n%s", r.stdout)
	}
	mustRun(t, "-db", db, "client", "delete", "-workspace", "acme", id)
	if err := authenticate(t, db, id, secret); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("the deleted client authenticates: %v", err)
	}
	if code := stop(); code != exitOK {
		t.Errorf("serve exited %d; log:\n%s", code, log)
	}
}
