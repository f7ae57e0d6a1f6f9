package identity_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
)

// tokenBench is a bbolt database with one user (three mapped attributes)
// and one confidential client that may refresh, whose keys use alg.
func tokenBench(b *testing.B, alg string) (*identity.Workspace, identity.TokenRequest) {
	b.Helper()
	ctx := context.Background()
	svc, err := identity.Open(filepath.Join(b.TempDir(), "tokens.db"), &identity.Options{
		IssuerBase: "https://id.example.com", TokenSigner: jws.Signer{}, SigningAlgorithm: alg,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	rows := []identity.ImportedUser{{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", PasswordHash: benchHash,
		Attributes: map[string]string{"department": "math", "tier": "gold", "employee_id": "1815"},
	}}
	if _, err := ws.ImportUsers(ctx, rows); err != nil {
		b.Fatal(err)
	}
	yes := true
	for _, key := range []string{"department", "tier", "employee_id"} {
		if _, err := ws.SetClaimMapper(ctx, key, identity.ClaimMapperSpec{ClaimName: "c_" + key, IncludeInID: &yes}); err != nil {
			b.Fatal(err)
		}
	}
	c, err := ws.CreateClient(ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil {
		b.Fatal(err)
	}
	return ws, identity.TokenRequest{ClientID: c.Client.ID, UserID: 1, Scopes: []string{"openid", "profile", "email"}, Nonce: "n"}
}

// BenchmarkIssueTokens issues an access, ID and refresh token per
// operation: one write transaction (the grant and its refresh token) and
// two signatures.
func BenchmarkIssueTokens(b *testing.B) {
	for _, alg := range []string{identity.RS256, identity.ES256} {
		b.Run("alg="+alg, func(b *testing.B) {
			ws, req := tokenBench(b, alg)
			ctx := context.Background()
			for b.Loop() {
				if _, err := ws.IssueTokens(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyAccessToken verifies one access token per operation: a
// signature and one read transaction (keys, grant, user).
func BenchmarkVerifyAccessToken(b *testing.B) {
	for _, alg := range []string{identity.RS256, identity.ES256} {
		b.Run("alg="+alg, func(b *testing.B) {
			ws, req := tokenBench(b, alg)
			ctx := context.Background()
			tok, err := ws.IssueTokens(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ws.VerifyAccessToken(ctx, tok.AccessToken); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLockedRefusal refuses logins of a locked account on a bbolt
// file: one read transaction and no hash per refusal (no endpoint
// subscribes to login.failed).
func BenchmarkLockedRefusal(b *testing.B) {
	ctx := context.Background()
	svc, err := identity.Open(filepath.Join(b.TempDir(), "locked.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	set := identity.DefaultSettings()
	set.Lockout.Threshold = 1
	ws, err := svc.CreateWorkspace(ctx, "bench", &set)
	if err != nil {
		b.Fatal(err)
	}
	rows := []identity.ImportedUser{{Username: "ada", Email: "ada@example.com", FullName: "Ada", PasswordHash: benchHash}}
	if _, err := ws.ImportUsers(ctx, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := ws.Authenticate(ctx, "ada", "wrong password"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		b.Fatalf("the locking failure: %v", err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ws.Authenticate(ctx, "ada", "wrong password"); identity.ErrorCode(err) != identity.CodeLocked {
				b.Errorf("refusal: %v, want locked", err)
			}
		}
	})
}

// BenchmarkIssueTokensWithAccess issues tokens that carry the groups and
// roles claims of a user in 0, 10 and 100 groups, each carrying one role
// of its own: the cost of reading what the user holds (one read per group
// and per role, in the issuance's transaction) beside the signatures.
func BenchmarkIssueTokensWithAccess(b *testing.B) {
	for _, alg := range []string{identity.RS256, identity.ES256} {
		for _, groups := range []int{0, 10, 100} {
			b.Run(fmt.Sprintf("alg=%s/groups=%d", alg, groups), func(b *testing.B) {
				ws, req := tokenBench(b, alg)
				ctx := context.Background()
				for i := range groups {
					g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: fmt.Sprintf("group-%03d", i)})
					if err != nil {
						b.Fatal(err)
					}
					r, err := ws.CreateRole(ctx, identity.NewRole{Name: fmt.Sprintf("role-%03d", i)})
					if err != nil {
						b.Fatal(err)
					}
					if err := ws.AssignGroupRole(ctx, g.ID, r.ID); err != nil {
						b.Fatal(err)
					}
					if err := ws.AddGroupMember(ctx, g.ID, req.UserID); err != nil {
						b.Fatal(err)
					}
				}
				req.Scopes = append(req.Scopes, identity.ScopeGroups, identity.ScopeRoles)
				for b.Loop() {
					if _, err := ws.IssueTokens(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
