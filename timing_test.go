package identity_test

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/identitylib/identity"
)

// djangoPBKDF2 returns password's hash in Django's PBKDF2-SHA256 form, as
// an import brings it.
func djangoPBKDF2(t *testing.T, password, salt string, iterations int) string {
	t.Helper()
	key, err := pbkdf2.Key(sha256.New, password, []byte(salt), iterations, 32)
	if err != nil {
		t.Fatal(err)
	}
	return "pbkdf2_sha256$" + strconv.Itoa(iterations) + "$" + salt + "$" + base64.StdEncoding.EncodeToString(key)
}

// TestRefusalTimesIndistinguishable samples, interleaved in a random
// order, the refusals of an unknown login, a wrong password (which costs
// a hash and two durable writes of the lockout's count), a locked
// account (which costs neither) and a wrong password of an account
// imported with a PBKDF2 hash (which costs several argon2id hashes), over
// a real bbolt file; and checks, for every pair of kinds, that one is
// slower than the other in between 20% and 80% of the rounds. Without the
// refusal floor the locked account is faster than every other kind in
// every round. The bounds are on order statistics only, so a slow or busy
// machine does not move them: all four wait for the same floor.
func TestRefusalTimesIndistinguishable(t *testing.T) {
	ctx := context.Background()
	svc, err := identity.Open(filepath.Join(t.TempDir(), "identity.db"), &identity.Options{
		PasswordHashing: &identity.Argon2Params{Memory: 1024, Time: 1, Threads: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	open := identity.DefaultSettings()
	open.Lockout = identity.LockoutPolicy{Threshold: identity.MaxLockoutThreshold, Duration: time.Hour}
	open.Throttle.Disabled = true
	acme, err := svc.CreateWorkspace(ctx, "acme", &open)
	if err != nil {
		t.Fatal(err)
	}
	strict := open
	strict.Lockout = identity.LockoutPolicy{Threshold: 1, Duration: identity.MaxLockoutDuration}
	beta, err := svc.CreateWorkspace(ctx, "beta", &strict)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"}); err != nil {
		t.Fatal(err)
	}
	legacy := identity.ImportedUser{Username: "leo", Email: "leo@example.com", FullName: "Leo",
		PasswordHash: djangoPBKDF2(t, "calculating clock", "seasalt2024", 8000)}
	if _, err := acme.ImportUsers(ctx, []identity.ImportedUser{legacy}); err != nil {
		t.Fatal(err)
	}
	if _, err := beta.CreateUser(ctx, identity.NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "difference engine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := beta.Authenticate(ctx, "bob", "wrong"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Fatalf("locking bob: %v", err)
	}

	kinds := []struct {
		name string
		try  func(round int) error
		want identity.Code
	}{
		{"unknown login", func(r int) error {
			_, err := acme.Authenticate(ctx, "nobody-"+strconv.Itoa(r), "wrong password")
			return err
		}, identity.CodeUnauthenticated},
		{"wrong password", func(int) error { _, err := acme.Authenticate(ctx, "ada", "wrong password"); return err }, identity.CodeUnauthenticated},
		{"locked account", func(int) error { _, err := beta.Authenticate(ctx, "bob", "difference engine"); return err }, identity.CodeLocked},
		{"legacy hash", func(int) error { _, err := acme.Authenticate(ctx, "leo", "wrong password"); return err }, identity.CodeUnauthenticated},
	}
	const warmUp, rounds = 5, 60
	rng := rand.New(rand.NewPCG(27, 2026))
	took := make([][]time.Duration, len(kinds))
	for r := range warmUp + rounds {
		for _, k := range rng.Perm(len(kinds)) {
			start := time.Now()
			err := kinds[k].try(r)
			d := time.Since(start)
			if identity.ErrorCode(err) != kinds[k].want {
				t.Fatalf("%s, round %d: %v, want %s", kinds[k].name, r, err, kinds[k].want)
			}
			if r >= warmUp {
				took[k] = append(took[k], d)
			}
		}
	}
	for i := range kinds {
		for j := i + 1; j < len(kinds); j++ {
			slower := 0
			for r := range rounds {
				if took[i][r] > took[j][r] {
					slower++
				}
			}
			p := float64(slower) / rounds
			t.Logf("P(%s slower than %s) = %.2f (medians %v and %v)", kinds[i].name, kinds[j].name, p, median(took[i]), median(took[j]))
			if p < 0.2 || p > 0.8 {
				t.Errorf("P(%s slower than %s) = %.2f over %d rounds, want between 0.2 and 0.8 (medians %v and %v)",
					kinds[i].name, kinds[j].name, p, rounds, median(took[i]), median(took[j]))
			}
		}
	}
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
