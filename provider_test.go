package identity_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// TestProviderMetadata: what the provider says it supports, written out:
// its scopes, the claims its ID tokens and userinfo may carry (a mapper's
// claim with IncludeInID, once; none of an access-only mapper), and its
// algorithms.
func TestProviderMetadata(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.mapper("department", "dept", false, true)
	e.mapper("level", "lvl", true, false)
	e.mapper("team", "team", true, true)
	md, err := e.ws.Provider().GetMetadata(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := identity.ProviderMetadata{
		Issuer: issuerBase + "/t/acme",
		Scopes: []string{"openid", "profile", "email", "groups", "roles"},
		Claims: []string{
			"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "sid", "azp", "at_hash", "amr",
			"name", "preferred_username", "updated_at", "email", "email_verified",
			"groups", "roles", "groups_overage", "roles_overage", "dept", "team",
		},
		SigningAlgorithms:        []string{"RS256", "ES256"},
		AuthorizationResponseIss: true,
	}
	if diff := cmp.Diff(want, md); diff != "" {
		t.Errorf("GetMetadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"openid", "profile", "email", "groups", "roles"}, identity.ProviderScopes()); diff != "" {
		t.Errorf("ProviderScopes (-want +got):\n%s", diff)
	}
	for scope, want := range map[string]bool{"openid": true, "profile": true, "email": true, "groups": true, "roles": true,
		"offline_access": false, "": false, "OPENID": false} {
		if got := identity.IsProviderScope(scope); got != want {
			t.Errorf("IsProviderScope(%q) = %v, want %v", scope, got, want)
		}
	}
}

// TestIDTokenClaimsListed: every claim of an ID token issued with every
// scope, a nonce and a session, and every claim of userinfo, is one the
// metadata lists, so that discovery never hides a claim the provider
// sets.
func TestIDTokenClaimsListed(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.mapper("department", "dept", false, true)
	e.attr(e.ada.ID, "department", "engineering")
	tok, s := e.codeTokens("openid", "profile", "email")
	md, err := e.ws.Provider().GetMetadata(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if s.session.ID == "" {
		t.Fatal("the sign-in started no session")
	}
	for what, claims := range map[string]map[string]any{"ID token": claimsOf(t, tok.IDToken), "userinfo": info} {
		for name := range claims {
			if !slices.Contains(md.Claims, name) {
				t.Errorf("the %s carries %q, which GetMetadata does not list", what, name)
			}
		}
	}
	for _, name := range []string{"nonce", "sid", "at_hash", "email_verified", "dept"} {
		if _, ok := claimsOf(t, tok.IDToken)[name]; !ok {
			t.Errorf("the ID token lacks %q: the test no longer covers it", name)
		}
	}
}

// TestKeySet: the key set holds the public JWK of every published key,
// with its id, algorithm and use, and nothing private.
func TestKeySet(t *testing.T) {
	e := newOIDCEnv(t, nil)
	keys, err := e.ws.ListSigningKeys(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := e.ws.Provider().GetKeySet(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("GetKeySet is not JSON: %v\n%s", err, raw)
	}
	if len(set.Keys) != 2 || len(keys) != 2 {
		t.Fatalf("%d keys in the set, %d published; want the active and the next key", len(set.Keys), len(keys))
	}
	for i, jwk := range set.Keys {
		want := map[string]any{"kid": keys[i].ID, "alg": "ES256", "use": "sig", "kty": "EC", "crv": "P-256"}
		for name, v := range want {
			if jwk[name] != v {
				t.Errorf("key %d: %s = %v, want %v", i, name, jwk[name], v)
			}
		}
		if _, ok := jwk["d"]; ok {
			t.Errorf("key %d carries its private part", i)
		}
	}

	noSigner := newTestEnv(t, &identity.Options{IssuerBase: issuerBase})
	_, err = noSigner.ws.Provider().GetKeySet(noSigner.ctx)
	identitytest.WantCode(t, err, identity.CodeInternal)
}
