package identity_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/memstore"
)

// TestDefaultPasswordHashing proves a Service built without options hashes
// with OWASP's argon2id parameters, and that the hash carries them.
func TestDefaultPasswordHashing(t *testing.T) {
	want := identity.Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}
	if diff := cmp.Diff(want, identity.DefaultArgon2Params); diff != "" {
		t.Errorf("DefaultArgon2Params mismatch (-want +got):\n%s", diff)
	}
	st := memstore.New()
	svc, err := identity.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, svc.PasswordHashing()); diff != "" {
		t.Errorf("PasswordHashing mismatch (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"})
	if err != nil {
		t.Fatal(err)
	}
	var rec store.User
	if err := st.View(ctx, func(tx store.Tx) (err error) { rec, err = tx.User("acme", u.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q does not carry the default parameters", rec.PasswordHash)
	}
	if _, err := ws.Authenticate(ctx, "ada", "analytical engine"); err != nil {
		t.Errorf("Authenticate: %v", err)
	}
}

func TestNewRejectsBadArgon2Params(t *testing.T) {
	for _, p := range []identity.Argon2Params{
		{Memory: 0, Time: 1, Threads: 1},
		{Memory: 64, Time: 0, Threads: 1},
		{Memory: 64, Time: 1, Threads: 0},
		{Memory: 1<<20 + 1, Time: 1, Threads: 1},
	} {
		_, err := identity.New(memstore.New(), &identity.Options{PasswordHashing: &p})
		if !errors.Is(err, identity.ErrInvalid) {
			t.Errorf("New with %+v: err = %v, want invalid", p, err)
		}
	}
}

// TestRaisedParametersRehash proves that raising the parameters upgrades a
// user's hash at the next login.
func TestRaisedParametersRehash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "id.db")
	low := identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}
	svc, err := identity.Open(path, &identity.Options{PasswordHashing: &low})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"}); err != nil {
		t.Fatal(err)
	}
	svc.Close()

	higher := identity.Argon2Params{Memory: 128, Time: 2, Threads: 1}
	svc, err = identity.Open(path, &identity.Options{PasswordHashing: &higher})
	if err != nil {
		t.Fatal(err)
	}
	ws, err = svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	before, err := ws.ListAuditRecords(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Authenticate(ctx, "ada", "analytical engine"); err != nil {
		t.Fatal(err)
	}
	// The rehash is no operator-visible change: the sign-in's record is
	// the only one (docs/audit.md, Decisions).
	after, err := ws.ListAuditRecords(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var actions []identity.AuditAction
	for _, r := range after.Records[:len(after.Records)-len(before.Records)] { // newest first
		actions = append(actions, r.Action)
	}
	if diff := cmp.Diff([]identity.AuditAction{identity.AuditSignInSucceeded}, actions); diff != "" {
		t.Errorf("records of the sign-in that rehashed (-want +got):\n%s", diff)
	}
	_, err = ws.Authenticate(ctx, "ada", "wrong")
	if !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("wrong password after rehash: %v", err)
	}
	svc.Close()

	st, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rec store.User
	if err := st.View(ctx, func(tx store.Tx) (err error) { rec, err = tx.User("acme", 1); return err }); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.PasswordHash, "$argon2id$v=19$m=128,t=2,p=1$") {
		t.Errorf("hash after login = %q, want the raised parameters", rec.PasswordHash)
	}
}

func TestErrorCodesAndIs(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &identity.Error{Code: identity.CodeNotFound, Message: "user 3 not found"})
	tests := []struct {
		err      error
		sentinel error
		want     bool
	}{
		{err, identity.ErrNotFound, true},
		{err, identity.ErrConflict, false},
		{&identity.Error{Code: identity.CodeLimitReached}, identity.ErrLimitReached, true},
		{errors.New("plain"), identity.ErrInternal, false},
	}
	for _, tt := range tests {
		if got := errors.Is(tt.err, tt.sentinel); got != tt.want {
			t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.sentinel, got, tt.want)
		}
	}
	codes := []struct {
		err  error
		want identity.Code
	}{
		{nil, ""},
		{err, identity.CodeNotFound},
		{errors.New("disk on fire"), identity.CodeInternal},
	}
	for _, tt := range codes {
		if got := identity.ErrorCode(tt.err); got != tt.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// failingStore fails every transaction, as a broken disk would.
type failingStore struct{ store.Store }

var errDisk = errors.New("disk failure")

func (failingStore) View(context.Context, func(store.Tx) error) error   { return errDisk }
func (failingStore) Update(context.Context, func(store.Tx) error) error { return errDisk }

func TestStoreFailureIsInternal(t *testing.T) {
	svc, err := identity.New(failingStore{memstore.New()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateWorkspace(context.Background(), "acme", nil)
	if identity.ErrorCode(err) != identity.CodeInternal || !errors.Is(err, errDisk) {
		t.Errorf("err = %v, want an internal error wrapping the disk failure", err)
	}
	if strings.Contains(err.Error(), "disk") {
		t.Errorf("message %q leaks the internal cause", err.Error())
	}
}
