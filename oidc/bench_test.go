package oidc_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
)

// The endpoint benchmarks run the provider over loopback (a real
// listener on 127.0.0.1, HTTP/1.1 with keep-alive) on a bbolt file of
// -bench.users users, imported with one precomputed argon2id hash:
//
//	go test -run '^$' -bench . ./oidc -bench.users 100000 -bench.alg RS256
var (
	benchUsers = flag.Int("bench.users", 100000, "users in the benchmark database")
	benchAlg   = flag.String("bench.alg", identity.RS256, "the signing algorithm of the benchmark workspace: RS256 or ES256")
)

// benchHash is an argon2id PHC string at the default parameters.
const benchHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// benchEnv is a provider on loopback over a database of users, with one
// confidential client that may refresh, and three mapped attributes per
// user.
type benchEnv struct {
	ws     *identity.Workspace
	issuer string
	client identity.CreatedClient
	http   *http.Client
}

var (
	benchOnce sync.Once
	bench     *benchEnv
	benchErr  error
	// benchDir holds the database; TestMain removes it.
	benchDir string
)

// openBench builds the environment once per process.
func openBench(b *testing.B) *benchEnv {
	b.Helper()
	benchOnce.Do(func() {
		if benchDir, benchErr = os.MkdirTemp("", "oidc-bench"); benchErr == nil {
			bench, benchErr = buildBench(benchDir)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return bench
}

func buildBench(dir string) (*benchEnv, error) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	svc, err := identity.Open(filepath.Join(dir, "bench.db"), &identity.Options{IssuerBase: base, TokenSigner: jws.Signer{}, SigningAlgorithm: *benchAlg})
	if err != nil {
		return nil, err
	}
	ws, err := svc.CreateWorkspace(ctx, "bench", nil)
	if err != nil {
		return nil, err
	}
	batch := make([]identity.ImportedUser, 0, identity.MaxImportBatch)
	for i := 1; i <= *benchUsers; i++ {
		name := fmt.Sprintf("user%07d", i)
		batch = append(batch, identity.ImportedUser{
			Username: name, Email: name + "@example.com", FullName: fmt.Sprintf("Person %d", i), PasswordHash: benchHash,
			Attributes: map[string]string{"department": fmt.Sprintf("dept%d", i%50), "tier": "gold", "employee_id": fmt.Sprint(i)},
		})
		if len(batch) == cap(batch) || i == *benchUsers {
			if _, err := ws.ImportUsers(ctx, batch); err != nil {
				return nil, err
			}
			batch = batch[:0]
		}
	}
	yes := true
	for _, key := range []string{"department", "tier", "employee_id"} {
		if _, err := ws.SetClaimMapper(ctx, key, identity.ClaimMapperSpec{ClaimName: "c_" + key, IncludeInID: &yes}); err != nil {
			return nil, err
		}
	}
	client, err := ws.CreateClient(ctx, identity.NewClient{Name: "bench", RedirectURIs: []string{"https://app.example/cb"}})
	if err != nil {
		return nil, err
	}
	h, err := oidc.New(svc, nil)
	if err != nil {
		return nil, err
	}
	go http.Serve(ln, h) //nolint:errcheck // runs for the life of the test process
	transport := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &benchEnv{ws: ws, issuer: base + "/t/bench", client: client, http: &http.Client{Transport: transport}}, nil
}

// user returns the i-th user's id, spread over the database.
func (e *benchEnv) user(i int) int64 { return int64(i*7919%*benchUsers + 1) }

// post sends a form to an endpoint as the client and fails unless it
// answers 200.
func (e *benchEnv) post(b *testing.B, endpoint string, form url.Values) {
	req, err := http.NewRequest(http.MethodPost, e.issuer+"/"+endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		b.Error(err)
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(e.client.Client.ID, e.client.Secret)
	e.do(b, req)
}

func (e *benchEnv) do(b *testing.B, req *http.Request) {
	res, err := e.http.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Errorf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, body)
	}
}

// feed returns a channel holding n values made by make, made before the
// timer starts.
func feed(n int, next func(i int) string) <-chan string {
	ch := make(chan string, n)
	for i := range n {
		ch <- next(i)
	}
	close(ch)
	return ch
}

// BenchmarkTokenEndpoint measures the token endpoint over loopback:
// authorization codes and refresh tokens redeemed by concurrent clients
// (each request a write transaction, an ID and an access token signed
// with RS256). Codes and refresh tokens are made before the timer starts.
func BenchmarkTokenEndpoint(b *testing.B) {
	e := openBench(b)
	ctx := context.Background()
	b.Run("grant=authorization_code", func(b *testing.B) {
		codes := feed(b.N, func(i int) string {
			created, err := e.ws.CreateSession(ctx, e.user(i), nil)
			if err != nil {
				b.Fatal(err)
			}
			token := created.Secret
			auth, err := e.ws.Provider().Authorize(ctx, identity.AuthorizationRequest{
				ClientID: e.client.Client.ID, RedirectURI: "https://app.example/cb", ResponseType: "code",
				Scopes: []string{"openid", "profile", "email"}, Nonce: "n",
			}, token)
			if err != nil || auth.Code == "" {
				b.Fatalf("authorize: %+v %v", auth, err)
			}
			return auth.Code
		})
		b.ResetTimer()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.post(b, "token", url.Values{"grant_type": {"authorization_code"}, "code": {<-codes}, "redirect_uri": {"https://app.example/cb"}})
			}
		})
	})
	b.Run("grant=refresh_token", func(b *testing.B) {
		refresh := feed(b.N, func(i int) string {
			t, err := e.ws.IssueTokens(ctx, identity.TokenRequest{ClientID: e.client.Client.ID, UserID: e.user(i), Scopes: []string{"openid", "profile", "email"}})
			if err != nil {
				b.Fatal(err)
			}
			return t.RefreshToken
		})
		b.ResetTimer()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.post(b, "token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {<-refresh}})
			}
		})
	})
}

// BenchmarkUserInfo measures the userinfo endpoint over loopback: one
// access token per user of a sample of 1,000, verified (signature, grant,
// user) and answered with the user's claims, by concurrent clients.
func BenchmarkUserInfo(b *testing.B) {
	e := openBench(b)
	ctx := context.Background()
	tokens := make([]string, 1000)
	for i := range tokens {
		t, err := e.ws.IssueTokens(ctx, identity.TokenRequest{ClientID: e.client.Client.ID, UserID: e.user(i), Scopes: []string{"openid", "profile", "email"}})
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = t.AccessToken
	}
	b.ResetTimer()
	b.SetParallelism(8)
	var n sync.Mutex
	next := 0
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Lock()
			tok := tokens[next%len(tokens)]
			next++
			n.Unlock()
			req, _ := http.NewRequest(http.MethodGet, e.issuer+"/userinfo", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			e.do(b, req)
		}
	})
}
