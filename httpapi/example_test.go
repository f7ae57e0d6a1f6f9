package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/store/memstore"
)

// A program serves the REST API of every workspace; a request carries an
// API key of its workspace with the scope the operation needs.
func ExampleNew() {
	ctx := context.Background()
	svc, err := identity.New(memstore.New(), &identity.Options{
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}, // fast, for the example
	})
	if err != nil {
		panic(err)
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		panic(err)
	}
	key, err := ws.CreateAPIKey(ctx, "reporting", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		panic(err)
	}
	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: "Ada Lovelace", Password: "correct horse battery"}); err != nil {
		panic(err)
	}

	api := httpapi.New(svc, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(api)
	defer srv.Close()

	for _, path := range []string{"/t/acme/api/v1/users/1", "/t/acme/api/v1/webhooks"} {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			panic(err)
		}
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode)
	}
	// Output:
	// /t/acme/api/v1/users/1 200
	// /t/acme/api/v1/webhooks 403
}
