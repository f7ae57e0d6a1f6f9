package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// workspaceBranding shows how the hosted pages and the emails present the
// workspace and changes the parts whose flags are given: identityd
// workspace branding -workspace SLUG [-display-name NAME] [-accent-color
// COLOR].
func workspaceBranding(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	name := fs.String("display-name", "", fmt.Sprintf("the workspace's `NAME` for people, at most %d characters (empty: the slug)", identity.MaxDisplayNameLength))
	accent := fs.String("accent-color", "", fmt.Sprintf("the `COLOR` of buttons and links, #rrggbb with a contrast of at least %.1f:1 against white (empty: %s)",
		identity.MinAccentContrast, identity.DefaultAccentColor))
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	given := givenFlags(fs)
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			return err
		}
		if given["display-name"] {
			s.Branding.DisplayName = *name
		}
		if given["accent-color"] {
			s.Branding.AccentColor = *accent
		}
		if given["display-name"] || given["accent-color"] {
			if err := ws.UpdateSettings(ctx, s); err != nil {
				return err
			}
		}
		logo, err := ws.GetLogo(ctx)
		if err != nil && !errors.Is(err, identity.ErrNotFound) {
			return err
		}
		printBranding(e.stdout, *slug, s.Branding, logo)
		return nil
	})
}

// givenFlags returns the names of the flags the command line set.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// printBranding prints the workspace's branding, one setting a line, each
// default marked as such, and its logo (the zero Logo for none).
func printBranding(w io.Writer, slug string, b identity.Branding, logo identity.Logo) {
	fmt.Fprintf(w, "display name: %s%s\n", b.Name(slug), defaultMark(b.DisplayName == ""))
	fmt.Fprintf(w, "accent color: %s%s\n", b.Accent(), defaultMark(b.AccentColor == ""))
	fmt.Fprintf(w, "logo: %s\n", logoLine(logo))
}

// defaultMark marks a value that is the default.
func defaultMark(isDefault bool) string {
	if isDefault {
		return " (default)"
	}
	return ""
}

// logoLine describes a logo: its size and ETag, or "none".
func logoLine(l identity.Logo) string {
	if l.Data == nil {
		return "none"
	}
	return fmt.Sprintf("%d bytes %s, ETag %s", len(l.Data), l.ContentType, l.ETag)
}

// workspaceLogo sets or removes the logo of the workspace's hosted pages
// and emails: identityd workspace logo -workspace SLUG (-file FILE |
// -delete).
func workspaceLogo(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	lf := logoFlags(fs)
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	if err := lf.check(fs); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		return lf.apply(ctx, e, ws.SetLogo, ws.DeleteLogo)
	})
}

// clientLogo sets or removes the logo the sign-in page shows for an OAuth
// client: identityd client logo -workspace SLUG CLIENT_ID (-file FILE |
// -delete).
func clientLogo(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	lf := logoFlags(fs)
	pos, err := parseCommand(fs, args, []string{"CLIENT_ID"}, "workspace")
	if err != nil {
		return err
	}
	if err := lf.check(fs); err != nil {
		return err
	}
	id := pos[0]
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		set := func(ctx context.Context, data []byte) (identity.Logo, error) { return ws.SetClientLogo(ctx, id, data) }
		del := func(ctx context.Context) error { return ws.DeleteClientLogo(ctx, id) }
		return lf.apply(ctx, e, set, del)
	})
}

// logoCommand is the flags of the logo commands.
type logoCommand struct {
	file   *string
	delete *bool
}

func logoFlags(fs *flag.FlagSet) logoCommand {
	return logoCommand{
		file: fs.String("file", "", fmt.Sprintf("set the logo to the PNG image in `FILE` (- for standard input): at most %d bytes and %d pixels a side",
			identity.MaxLogoBytes, identity.MaxLogoSide)),
		delete: fs.Bool("delete", false, "remove the logo"),
	}
}

// check requires exactly one of -file and -delete.
func (l logoCommand) check(fs *flag.FlagSet) error {
	if (*l.file == "") == !*l.delete {
		return usagef(fs, "give either -file or -delete")
	}
	return nil
}

// apply sets the logo from the file with set, or removes it with del,
// and says what it did.
func (l logoCommand) apply(ctx context.Context, e *env, set func(context.Context, []byte) (identity.Logo, error), del func(context.Context) error) error {
	if *l.delete {
		if err := del(ctx); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "deleted logo")
		return nil
	}
	data, err := e.readLogo(*l.file)
	if err != nil {
		return err
	}
	logo, err := set(ctx, data)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "logo: %s\n", logoLine(logo))
	return nil
}

// readLogo reads the caller's file name (standard input for "-"), which
// must hold at most identity.MaxLogoBytes: a larger file is refused
// without reading it all.
func (e *env) readLogo(name string) ([]byte, error) {
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := e.openFile(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, identity.MaxLogoBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > identity.MaxLogoBytes {
		return nil, fmt.Errorf("%s: a logo must be at most %d bytes", name, identity.MaxLogoBytes)
	}
	return data, nil
}

// workspaceThrottle shows the workspace's limits on failed sign-ins and
// on reset and verification emails, and changes the parts whose flags are
// given: identityd workspace throttle -workspace SLUG [-throttle=false]
// [-per-address COUNT/WINDOW] [-per-login COUNT/WINDOW] [-mail-interval
// D].
func workspaceThrottle(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	on := fs.Bool("throttle", true, "limit failed sign-ins and emails; -throttle=false turns both limits off")
	perAddress := fs.String("per-address", "", fmt.Sprintf("at most `COUNT/WINDOW` failed sign-ins from one client address, such as 50/15m (0/0: the default, %d/%s)",
		identity.DefaultAddressFailures, shortDuration(identity.DefaultThrottleWindow)))
	perLogin := fs.String("per-login", "", fmt.Sprintf("at most `COUNT/WINDOW` failed sign-ins naming one login, from any address (0/0: the default, %d/%s)",
		identity.DefaultLoginFailures, shortDuration(identity.DefaultThrottleWindow)))
	mail := fs.Duration("mail-interval", 0, fmt.Sprintf("send at most one reset or verification email to an address per `DURATION`; a repeat reuses it (0: the default, %s)",
		shortDuration(identity.DefaultMailInterval)))
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	given := givenFlags(fs)
	var rates [2]identity.Rate
	for i, f := range []struct {
		name  string
		value string
	}{{"per-address", *perAddress}, {"per-login", *perLogin}} {
		if !given[f.name] {
			continue
		}
		r, err := parseRate(f.value)
		if err != nil {
			return usagef(fs, "-%s: %v", f.name, err)
		}
		rates[i] = r
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			return err
		}
		t := &s.Throttle
		if given["throttle"] {
			t.Disabled = !*on
		}
		if given["per-address"] {
			t.PerAddress = rates[0]
		}
		if given["per-login"] {
			t.PerLogin = rates[1]
		}
		if given["mail-interval"] {
			t.MailInterval = *mail
		}
		if len(given) > 1 { // -workspace is always given
			if err := ws.UpdateSettings(ctx, s); err != nil {
				return err
			}
		}
		printThrottle(e.stdout, s.Throttle)
		return nil
	})
}

// parseRate parses COUNT/WINDOW, such as 50/15m.
func parseRate(s string) (identity.Rate, error) {
	count, window, ok := strings.Cut(s, "/")
	if !ok {
		return identity.Rate{}, fmt.Errorf("%q is not COUNT/WINDOW, such as 50/15m", s)
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		return identity.Rate{}, fmt.Errorf("count %q is not a number", count)
	}
	d, err := time.ParseDuration(window)
	if err != nil {
		return identity.Rate{}, fmt.Errorf("window %q is not a duration, such as 15m", window)
	}
	return identity.Rate{Count: n, Window: d}, nil
}

// printThrottle prints the throttle policy p, one setting a line, the
// defaults of its zero fields filled in.
func printThrottle(w io.Writer, p identity.ThrottlePolicy) {
	state := "on"
	if p.Disabled {
		state = "off"
	}
	window := func(d time.Duration) time.Duration {
		if d == 0 {
			return identity.DefaultThrottleWindow
		}
		return d
	}
	count := func(n, def int) int {
		if n == 0 {
			return def
		}
		return n
	}
	mail := p.MailInterval
	if mail == 0 {
		mail = identity.DefaultMailInterval
	}
	fmt.Fprintf(w, "throttle: %s\nper address: %d failed sign-ins in %s\nper login: %d failed sign-ins in %s\nmail interval: %s\n", state,
		count(p.PerAddress.Count, identity.DefaultAddressFailures), shortDuration(window(p.PerAddress.Window)),
		count(p.PerLogin.Count, identity.DefaultLoginFailures), shortDuration(window(p.PerLogin.Window)),
		shortDuration(mail))
}

// shortDuration is d as flags take it, without zero units: 15m, 1h30m, 45s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// userVerifyEmail marks a user's email address verified, or with
// -unverified not verified, for an administrator who checked it another
// way (or wants it checked again): identityd user verify-email -workspace
// SLUG USER [-unverified].
func userVerifyEmail(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace the user belongs to")
	unverified := fs.Bool("unverified", false, "mark the address not verified, so that the user must confirm it again")
	pos, err := parseCommand(fs, args, []string{"USER"}, "workspace")
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		u, err := userRef(ctx, ws, *slug, pos[0])
		if err != nil {
			return err
		}
		u, err = ws.SetEmailVerified(ctx, u.ID, !*unverified)
		if err != nil {
			return err
		}
		state := "verified"
		if !u.EmailVerified {
			state = "not verified"
		}
		fmt.Fprintf(e.stdout, "user %s: email %s %s\n", userLabel(u), orDash(u.Email), state)
		return nil
	})
}
