package identity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
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
		ws := newExampleWorkspace()
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
		_, err = ws.Authenticate(ctx, "fuzz", password)
		if code := identity.ErrorCode(err); code != "" && code != identity.CodeUnauthenticated {
			t.Fatalf("Authenticate with imported hash %q: %v", hash, err)
		}
		if got, _ := ws.GetUser(ctx, users[0].ID); got.Username != "fuzz" {
			t.Fatalf("imported user reads back as %+v", got)
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
			if list, _ := ws.ListUsers(ctx, "", nil); list.Total != 0 {
				t.Fatalf("a refused create stored %d users", list.Total)
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
