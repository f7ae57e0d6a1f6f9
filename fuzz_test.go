package identity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// FuzzImportHash feeds arbitrary hash encodings to ImportUsers and
// Authenticate: a hash is either refused at import with a field error, or
// imported and then verified without panicking; a failed login never
// changes it.
func FuzzImportHash(f *testing.F) {
	for _, seed := range []string{
		"$argon2id$v=19$m=128,t=1,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo",
		"$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdA$AAAA",
		"$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
		"$2b$99$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
		"pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA=",
		"$pbkdf2-sha256$1200$AAECAwQFBgcICQoLDA0ODw$djG.Q.ej.HjLOYOxC3tE9wAT5oosn6uV8P/9fG/jzzI",
		"$pbkdf2-sha512$i=1100,l=64$AAECAwQFBgcICQoLDA0ODw$AAAA",
		"$pbkdf2$-1$$", "pbkdf2_md5$1$a$b", "$argon2id$", "$$$$$",
	} {
		f.Add(seed, "correct horse")
	}
	f.Fuzz(func(t *testing.T, hash, password string) {
		ctx := context.Background()
		st := memstore.New()
		svc, err := identity.New(st, &identity.Options{PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := svc.CreateWorkspace(ctx, "acme", nil)
		if err != nil {
			t.Fatal(err)
		}
		users, err := ws.ImportUsers(ctx, []identity.ImportedUser{{
			Username: "fuzz", Email: "fuzz@example.com", FullName: "Fuzz", PasswordHash: hash,
		}})
		if err != nil {
			var e *identity.Error
			if !errors.As(err, &e) || e.Code != identity.CodeInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "users[0].passwordHash" {
				t.Fatalf("ImportUsers(%q) = %v, want one passwordHash field error", hash, err)
			}
			return
		}
		imported := users[0]
		stored := func() (string, identity.User) {
			t.Helper()
			var rec store.User
			if err := st.View(ctx, func(tx store.Tx) (err error) { rec, err = tx.User("acme", imported.ID); return err }); err != nil {
				t.Fatal(err)
			}
			u, err := ws.GetUser(ctx, imported.ID)
			if err != nil {
				t.Fatal(err)
			}
			return rec.PasswordHash, u
		}
		// A wrong password first (the fuzzed one with a "!" more: not a
		// NUL, which PBKDF2 cannot tell from none, as HMAC pads short keys
		// with zeros), then the fuzzed one: every refusal leaves the hash
		// and the user as they were; only a success may replace the hash.
		for _, pw := range []string{password + "!", password} {
			_, err = ws.Authenticate(ctx, "fuzz", pw)
			if code := identity.ErrorCode(err); code != "" && code != identity.CodeUnauthenticated {
				t.Fatalf("Authenticate with imported hash %q: %v", hash, err)
			}
			if err == nil {
				if _, u := stored(); u.Username != "fuzz" {
					t.Fatalf("the user after a login reads back as %+v", u)
				}
				return
			}
			gotHash, gotUser := stored()
			if gotHash != hash {
				t.Fatalf("a failed login changed the hash %q to %q", hash, gotHash)
			}
			if diff := cmp.Diff(imported, gotUser); diff != "" {
				t.Fatalf("a failed login changed the user (-imported +now):\n%s", diff)
			}
		}
	})
}

// FuzzCreateUser checks that any input is either created and reads back
// exactly, or refused with a validation error, never a panic or another
// kind of error.
func FuzzCreateUser(f *testing.F) {
	f.Add("ada", "ada@example.com", "Ada Lovelace", "analytical engine")
	f.Add("a_b.c-d", "zoë@example.com", "  Zoë  ", "éééééééé")
	f.Add("", "", "", "")
	f.Add("x", "Ada <ada@example.com>", "\x00", "abc")
	f.Add("ü", "a@b", "\xff", "ada")
	f.Fuzz(func(t *testing.T, username, email, fullName, password string) {
		ctx := context.Background()
		ws := newExampleWorkspace()
		nu := identity.NewUser{Username: username, Email: email, FullName: fullName, Password: password}
		u, err := ws.CreateUser(ctx, nu)
		if err != nil {
			if identity.ErrorCode(err) != identity.CodeInvalid {
				t.Fatalf("CreateUser(%+v) = %v, want success or a validation error", nu, err)
			}
			if list, err := ws.ListUsers(ctx, "", nil); err != nil || list.Total != 0 {
				t.Fatalf("a refused create stored %d users (%v)", list.Total, err)
			}
			return
		}
		got, err := ws.GetUser(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(u, got); diff != "" {
			t.Fatalf("GetUser mismatch (-created +read):\n%s", diff)
		}
		if _, err := ws.Authenticate(ctx, username, password); err != nil {
			t.Fatalf("Authenticate of a created user: %v", err)
		}
	})
}
