package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/identitylib/identity"
)

// smtpPasswordEnv names the environment variable workspace smtp reads the
// SMTP password from. A password is never a flag: flags show in process
// listings and shell history.
const smtpPasswordEnv = "IDENTITYD_SMTP_PASSWORD"

// defaultSMTPPorts are the ports -port 0 means, per TLS mode.
var defaultSMTPPorts = map[identity.SMTPTLSMode]int{
	identity.SMTPStartTLS:    587,
	identity.SMTPImplicitTLS: 465,
	identity.SMTPNoTLS:       25,
}

// workspaceSMTP sets or removes a workspace's SMTP settings, which make
// new users and changed emails get a verification email:
// identityd workspace smtp -workspace SLUG -host HOST -from ADDR -verify-url URL [...]
// identityd workspace smtp -workspace SLUG -off
func workspaceSMTP(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	off := fs.Bool("off", false, "remove the SMTP settings: no more verification emails")
	host := fs.String("host", "", "the SMTP server's `HOST` name or IP address")
	port := fs.Int("port", 0, "the server's `PORT`; 0 means 587 for starttls, 465 for tls, 25 for none")
	mode := fs.String("tls", string(identity.SMTPStartTLS), "`MODE`: starttls (required), tls (implicit) or none (localhost only)")
	from := fs.String("from", "", "the sender `ADDRESS`")
	fromName := fs.String("from-name", "", "an optional sender display `NAME`")
	verifyURL := fs.String("verify-url", "", "the link `TEMPLATE` of verification emails, containing {token}")
	resetURL := fs.String("reset-url", "", "an optional link `TEMPLATE` of password reset emails, containing {token}; the hosted pages use their own")
	username := fs.String("username", "", "the SMTP login `USER`; the password comes from $"+smtpPasswordEnv+" or -password-stdin")
	passwordStdin := fs.Bool("password-stdin", false, "read the SMTP password from the first line of standard input")
	lifetime := fs.Duration("token-lifetime", 0, "how long a verification link stays valid (`DURATION`); 0 means 24h")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	if *off {
		var other []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "off" && f.Name != "workspace" {
				other = append(other, "-"+f.Name)
			}
		})
		if len(other) > 0 {
			return usagef(fs, "-off takes no other settings (got %s)", strings.Join(other, " "))
		}
		return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
			if err := setSMTP(ctx, ws, nil); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "removed the SMTP settings of workspace %s\n", *slug)
			return nil
		})
	}
	if err := required(fs, "host", "from", "verify-url"); err != nil {
		return err
	}
	m := &identity.SMTPSettings{
		Host: *host, Port: *port, TLS: identity.SMTPTLSMode(*mode), Username: *username,
		From: *from, FromName: *fromName, VerifyURL: *verifyURL, ResetURL: *resetURL, TokenLifetime: *lifetime,
	}
	if m.Port == 0 {
		m.Port = defaultSMTPPorts[m.TLS]
	}
	password, err := smtpPassword(e, *passwordStdin)
	if err != nil {
		return err
	}
	if password != "" && *username == "" {
		return usagef(fs, "a password needs -username")
	}
	m.Password = password
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		err := setSMTP(ctx, ws, m)
		if ie, ok := errors.AsType[*identity.Error](err); ok && password == "" && len(ie.Fields) > 0 && ie.Fields[0].Field == "smtp.password" {
			return fmt.Errorf("%s (set $%s or use -password-stdin; a stored password is kept only while host and username stay the same)", message(err), smtpPasswordEnv)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "saved the SMTP settings of workspace %s\n", *slug)
		return nil
	})
}

// smtpPassword returns the password from standard input when fromStdin,
// else from the environment ("" when neither has one).
func smtpPassword(e *env, fromStdin bool) (string, error) {
	if !fromStdin {
		return e.getenv(smtpPasswordEnv), nil
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("reading the SMTP password from standard input: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// setSMTP replaces the workspace's SMTP settings, keeping the rest.
func setSMTP(ctx context.Context, ws *identity.Workspace, m *identity.SMTPSettings) error {
	s, err := ws.GetSettings(ctx)
	if err != nil {
		return err
	}
	s.SMTP = m
	return ws.UpdateSettings(ctx, s)
}
