package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/identitylib/identity"
)

// workspacePolicy shows the workspace's sign-in policy and changes the
// parts whose flags are given: identityd workspace policy -workspace SLUG
// [-lockout-threshold N] [-lockout-duration D] [-lockout=false]
// [-password-min-length N] [-mfa optional|required]
// [-require-verified-email=true|false].
func workspacePolicy(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	threshold := fs.Int("lockout-threshold", 0, fmt.Sprintf("lock an account after `N` consecutive failed attempts (1-%d)", identity.MaxLockoutThreshold))
	duration := fs.Duration("lockout-duration", 0, "how long a lock lasts (`DURATION`, whole seconds, at most 720h)")
	lockout := fs.Bool("lockout", true, "lock accounts after failed attempts; -lockout=false turns it off")
	minLength := fs.Int("password-min-length", 0, fmt.Sprintf("the shortest password accepted, in characters (`N`, at least %d)", identity.MinPasswordLength))
	mfa := fs.String("mfa", "", fmt.Sprintf("whether users need a second factor to sign in: `POLICY` %s or %s", identity.MFAOptional, identity.MFARequired))
	verified := fs.Bool("require-verified-email", false, "refuse the sign-in of a user whose email address is not verified, sending a new\n"+
		"verification email instead (-require-verified-email=false: allow it, the default)")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	given := givenFlags(fs)
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			return err
		}
		changed := len(given) > 1 // -workspace is always given
		if given["lockout-threshold"] {
			s.Lockout.Threshold = *threshold
		}
		if given["lockout-duration"] {
			s.Lockout.Duration = *duration
		}
		if given["lockout"] {
			s.Lockout.Disabled = !*lockout
		}
		if given["password-min-length"] {
			s.PasswordPolicy.MinLength = *minLength
		}
		if given["mfa"] {
			s.MFA = identity.MFAPolicy(*mfa) // the library refuses other values
		}
		if given["require-verified-email"] {
			s.RequireVerifiedEmail = *verified
		}
		if changed {
			if err := ws.UpdateSettings(ctx, s); err != nil {
				return err
			}
		}
		printPolicy(e, s)
		return nil
	})
}

// printPolicy prints the sign-in policy of settings s, one setting a line.
func printPolicy(e *env, s identity.Settings) {
	mfa := s.MFA
	if mfa == "" {
		mfa = identity.MFAOptional
	}
	l := s.Lockout
	state := "on"
	if l.Disabled {
		state = "off"
	}
	threshold, duration := l.Threshold, l.Duration
	if threshold == 0 {
		threshold = identity.DefaultLockoutThreshold
	}
	if duration == 0 {
		duration = identity.DefaultLockoutDuration
	}
	verified := "optional"
	if s.RequireVerifiedEmail {
		verified = "required"
	}
	fmt.Fprintf(e.stdout, "lockout: %s\nlockout threshold: %d\nlockout duration: %s\npassword length: %d-%d\nmfa: %s\nverified email: %s\n",
		state, threshold, duration.Round(time.Second), s.PasswordPolicy.MinLength, s.PasswordPolicy.MaxLength, mfa, verified)
}
