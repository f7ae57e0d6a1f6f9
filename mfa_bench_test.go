package identity_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
)

// BenchmarkVerifySecondFactor completes sign-ins with a TOTP code on a
// bbolt file: per operation one read transaction (the challenge) and one
// write transaction (lockout state, the code's step, the challenge used),
// with lockout on. The challenges are made outside the timer; the clock
// moves a step per operation so that every code is fresh.
func BenchmarkVerifySecondFactor(b *testing.B) {
	ctx := context.Background()
	clock := testutil.NewClock(time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC))
	svc, err := identity.Open(filepath.Join(b.TempDir(), "mfa.db"), &identity.Options{Now: clock.Now, PasswordHashing: &cheapArgon2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	ada, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: adaPassword})
	if err != nil {
		b.Fatal(err)
	}
	en, err := ws.BeginTOTPEnrollment(ctx, ada.ID)
	if err != nil {
		b.Fatal(err)
	}
	code := func() string {
		c, err := totp.GenerateCode(en.Secret, clock.Now())
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	if _, err := ws.ConfirmTOTPEnrollment(ctx, ada.ID, code()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		clock.Advance(30 * time.Second)
		_, err := ws.Authenticate(ctx, "ada", adaPassword)
		if identity.ErrorCode(err) != identity.CodeMFARequired {
			b.Fatalf("Authenticate: %v", err)
		}
		challenge, c := err.(*identity.Error).Challenge, code()
		b.StartTimer()
		if _, err := ws.VerifySecondFactor(ctx, challenge, c); err != nil {
			b.Fatal(err)
		}
	}
}
