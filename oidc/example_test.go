package oidc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// A program mounts the provider at "/t/", next to its own routes; every
// workspace is served under its issuer.
func Example() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	svc, err := identity.New(memstore.New(), &identity.Options{IssuerBase: srv.URL, TokenSigner: jws.Signer{}})
	if err != nil {
		panic(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), "acme", nil); err != nil {
		panic(err)
	}
	provider, err := oidc.New(svc, nil)
	if err != nil {
		panic(err)
	}
	mux.Handle("/t/", provider)

	resp, err := http.Get(srv.URL + "/t/acme/.well-known/openid-configuration")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var config struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&config); err != nil {
		panic(err)
	}
	fmt.Println(strings.TrimPrefix(config.Issuer, srv.URL))
	fmt.Println(strings.TrimPrefix(config.TokenEndpoint, srv.URL))
	// Output:
	// /t/acme
	// /t/acme/token
}
