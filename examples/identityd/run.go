package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/pgstore"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// env is what every command works with: the global flags and the streams.
// A command reaches its caller's environment variables and files through
// env (getenv, openFile, createFile), never through package os: a command
// that arrives on serve's admin socket (see adminsocket.go) runs in the
// server, and its streams, variables and files are those of the client.
type env struct {
	dbPath string
	// adminSocket is the global -admin-socket: "" for the default path,
	// adminSocketOff for none.
	adminSocket string
	stdin       io.Reader
	stdout      io.Writer
	stderr      io.Writer
	// caller is the side that gave the command; nil means this process.
	caller caller
	// server, for a command that arrived on the admin socket, is the
	// server it runs in, whose Service open returns.
	server *adminServer
}

// command is one command of the command line.
type command struct {
	name string // "key create"
	args string // the synopsis of its arguments
	// run parses args with fs, which is named after the command and prints
	// its usage, and does the work.
	run func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error
	// help, if any, is printed after the flags by the command's -h.
	help string
	// local: the command runs in this process even while a server holds
	// the database, instead of through its admin socket.
	local bool
}

// commands returns the command table. It is a function, not a variable,
// because the commands' usage texts are built from it.
func commands() []command {
	return []command{
		{name: "workspace create", args: "SLUG", run: workspaceCreate},
		{name: "workspace list", run: workspaceList},
		{name: "workspace smtp", args: "-workspace SLUG (-host HOST -from ADDR -verify-url URL [-reset-url URL] [-port N] [-tls MODE] [-from-name NAME] [-username USER [-password-stdin]] [-token-lifetime D] | -off)", run: workspaceSMTP},
		{name: "workspace policy", args: "-workspace SLUG [-lockout-threshold N] [-lockout-duration D] [-lockout=false] [-password-min-length N] [-mfa optional|required] [-require-verified-email=true|false]", run: workspacePolicy},
		{name: "workspace throttle", args: "-workspace SLUG [-throttle=false] [-per-address COUNT/WINDOW] [-per-login COUNT/WINDOW] [-mail-interval D]", run: workspaceThrottle},
		{name: "workspace retention", args: "-workspace SLUG [-audit-days N] [-succeeded-delivery-days N] [-failed-delivery-days N] [-mail-job-days N] [-ended-session-days N]", run: workspaceRetention},
		{name: "workspace branding", args: "-workspace SLUG [-display-name NAME] [-accent-color COLOR]", run: workspaceBranding},
		{name: "workspace logo", args: "-workspace SLUG (-file FILE | -delete)", run: workspaceLogo},
		{name: "workspace delete", args: "SLUG", run: workspaceDelete},
		{name: "key create", args: "-workspace SLUG -scopes SCOPE[,SCOPE...] [-name NAME]", run: keyCreate},
		{name: "key list", args: "-workspace SLUG", run: keyList},
		{name: "key revoke", args: "-workspace SLUG ID", run: keyRevoke},
		{name: "client create", args: "-workspace SLUG -redirect-uri URI[,URI...] [-name NAME] [-public] [-grant-types authorization_code,refresh_token,client_credentials] [-claims groups,roles] [-post-logout-redirect-uri URI[,URI...]]", run: clientCreate},
		{name: "client list", args: "-workspace SLUG", run: clientList},
		{name: "client delete", args: "-workspace SLUG CLIENT_ID", run: clientDelete},
		{name: "client logo", args: "-workspace SLUG CLIENT_ID (-file FILE | -delete)", run: clientLogo},
		{name: "signing-key rotate", args: "-workspace SLUG [-alg RS256|ES256]", run: signingKeyRotate},
		{name: "user import", args: "-workspace SLUG [-file F] [-batch N]", run: userImport, help: importHelp},
		{name: "user export", args: "-workspace SLUG [-o FILE]", run: userExport, help: exportHelp},
		{name: "user delete", args: "-workspace SLUG ID", run: userDelete},
		{name: "user roles", args: "-workspace SLUG USER", run: userRoles, help: refsHelp},
		{name: "user passkeys", args: "-workspace SLUG USER", run: userPasskeys, help: refsHelp},
		{name: "user verify-email", args: "-workspace SLUG USER [-unverified]", run: userVerifyEmail, help: refsHelp},
		{name: "role create", args: "-workspace SLUG NAME [-description TEXT]", run: roleCreate},
		{name: "role list", args: "-workspace SLUG", run: roleList},
		{name: "role delete", args: "-workspace SLUG ROLE", run: roleDelete, help: refsHelp},
		{name: "group create", args: "-workspace SLUG NAME [-description TEXT]", run: groupCreate},
		{name: "group list", args: "-workspace SLUG", run: groupList},
		{name: "group delete", args: "-workspace SLUG GROUP", run: groupDelete, help: refsHelp},
		{name: "group add", args: "-workspace SLUG GROUP USER", run: groupAdd, help: refsHelp},
		{name: "group remove", args: "-workspace SLUG GROUP USER", run: groupRemove, help: refsHelp},
		{name: "group grant", args: "-workspace SLUG GROUP ROLE", run: groupGrant, help: refsHelp},
		{name: "group revoke", args: "-workspace SLUG GROUP ROLE", run: groupRevoke, help: refsHelp},
		{name: "operator create", args: "USERNAME [-viewer] [-workspace SLUG]", run: operatorCreate},
		{name: "audit list", args: "-workspace SLUG [-actor kind:id] [-target kind:id] [-action A] [-outcome success|failure] [-since RFC3339] [-until RFC3339] [-limit N] [-cursor C] [-json]", run: auditList},
		{name: "audit export", args: "-workspace SLUG [-since T] [-o FILE]", run: auditExport},
		{name: "backup", args: "-o FILE", run: backup},
		{name: "compact", run: compact, local: true},
		{name: "metrics", run: metricsCommand},
		{name: "serve", args: "[-addr HOST:PORT] [-issuer-base URL] [-allow-private-webhooks] [-access-log=false] [-attempt-timeout D] [-hash-memory-budget BYTES] [-metrics-addr HOST:PORT] [-key-cache-ttl D] [-admin-socket PATH|off] [-trusted-proxies CIDR[,CIDR...]] [-refresh-reuse D] [-audit-log FILE|-] [-console=false]", run: serve, local: true},
	}
}

// synopsis is one usage line of the command.
func (c command) synopsis() string {
	return strings.TrimSpace("identityd [-db FILE] " + c.name + " " + c.args)
}

// usageError is a command line that does not fit the usage. run prints it
// with the command's synopsis and exits with status 2.
type usageError struct {
	msg      string
	synopses []string
}

func (e *usageError) Error() string { return e.msg }

// errUsageShown is a usage error that the flag package has printed already.
var errUsageShown = errors.New("usage error already printed")

// run runs the command line args (without the program name) and returns the
// exit status. ctx ends the command: serve shuts down gracefully, the other
// commands stop at their next store call.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr}
	global := flag.NewFlagSet("identityd", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.StringVar(&e.dbPath, "db", "identity.db", "the database: a bbolt `FILE`, or a postgres:// URL")
	global.StringVar(&e.adminSocket, "admin-socket", "", "the admin socket `PATH` of a running identityd serve, through which commands run while it\n"+
		"holds the database (default FILE.sock for a bbolt -db FILE, none for PostgreSQL); off: never use one")
	global.Usage = func() { printUsage(stderr, global) }
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	args = global.Args()
	if len(args) == 0 || args[0] == "help" {
		printUsage(stderr, global)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, rest, err := lookup(args)
	if err != nil {
		return report(stderr, err)
	}
	if !cmd.local {
		// While a server holds the database, the command runs in it.
		conn, err := e.dialAdmin(ctx)
		if err != nil {
			return report(stderr, err)
		}
		if conn != nil {
			return runRemote(ctx, conn, e, args)
		}
	}
	return report(stderr, cmd.run(operatorContext(ctx, cmd, os.Geteuid()), e, cmd.flagSet(stderr), rest))
}

// lookup finds the command that args start with and returns it with the
// remaining arguments.
func lookup(args []string) (command, []string, error) {
	var group []string // the synopses of the commands starting with args[0]
	for _, c := range commands() {
		words := strings.Fields(c.name)
		if words[0] != args[0] {
			continue
		}
		group = append(group, c.synopsis())
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], nil
		}
	}
	switch {
	case len(group) > 0 && len(args) > 1:
		return command{}, nil, &usageError{msg: fmt.Sprintf("unknown command %q", args[0]+" "+args[1]), synopses: group}
	case len(group) > 0:
		return command{}, nil, &usageError{msg: fmt.Sprintf("%q needs a subcommand", args[0]), synopses: group}
	}
	return command{}, nil, &usageError{msg: fmt.Sprintf("unknown command %q", args[0])}
}

// flagSet returns an empty flag set for the command whose usage is its
// synopsis and its flags.
func (c command) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("identityd "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n", c.synopsis())
		fs.PrintDefaults()
		if c.help != "" {
			fmt.Fprintf(stderr, "\n%s", c.help)
		}
	}
	return fs
}

// report prints err, if any, and returns the exit status for it.
func report(stderr io.Writer, err error) int {
	var usage *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsageShown):
		return exitUsage
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "identityd: %s\n", usage.msg)
		for i, syn := range usage.synopses {
			prefix := "Usage: "
			if i > 0 {
				prefix = "       "
			}
			fmt.Fprintf(stderr, "%s%s\n", prefix, syn)
		}
		fmt.Fprintln(stderr, "Run 'identityd -h' for help.")
		return exitUsage
	default:
		fmt.Fprintf(stderr, "identityd: %s\n", message(err))
		return exitError
	}
}

// printUsage prints the help text.
func printUsage(w io.Writer, global *flag.FlagSet) {
	fmt.Fprintln(w, "identityd serves the identity management REST API and administers its database.")
	fmt.Fprintln(w, "\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s\n", c.synopsis())
	}
	fmt.Fprintln(w, "\nGlobal flags:")
	global.PrintDefaults()
	fmt.Fprintln(w, "\nScopes:")
	for _, s := range identity.Scopes() {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintln(w, "\nRun 'identityd COMMAND -h' for the flags of a command.")
}

// parseCommand is the preamble of every command: it parses args with fs,
// checks that exactly the positional arguments names remain, and that each
// string flag in requiredFlags has a non-empty value, in that order. It
// returns the positional arguments.
func parseCommand(fs *flag.FlagSet, args []string, names []string, requiredFlags ...string) ([]string, error) {
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	pos, err := positional(fs, names...)
	if err != nil {
		return nil, err
	}
	if err := required(fs, requiredFlags...); err != nil {
		return nil, err
	}
	return pos, nil
}

// parse parses the command's flags, which may come before, between and
// after its positional arguments (role create -workspace acme admin
// -description TEXT), as the synopses show them; "--" ends the flags, so
// that a positional argument may start with "-". The flag package stops
// at the first positional argument, so parse takes it and goes on with
// the rest; fs.Args() returns the positional arguments at the end. The
// flag package has printed any problem, so the error needs no further
// report.
func parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return errUsageShown
		}
		rest := fs.Args()
		parsed := args[:len(args)-len(rest)]
		if len(rest) == 0 || len(parsed) > 0 && parsed[len(parsed)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	// Parse leaves flags already set as they are: this only makes the
	// positional arguments what fs.Args() returns.
	return fs.Parse(append([]string{"--"}, pos...))
}

// usagef returns a usage error of the command whose flags are fs.
func usagef(fs *flag.FlagSet, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	name := strings.TrimPrefix(fs.Name(), "identityd ")
	for _, c := range commands() {
		if c.name == name {
			return &usageError{msg: name + ": " + msg, synopses: []string{c.synopsis()}}
		}
	}
	return &usageError{msg: msg}
}

// positional returns the command's positional arguments, which must be
// exactly as many as names.
func positional(fs *flag.FlagSet, names ...string) ([]string, error) {
	args := fs.Args()
	switch {
	case len(args) < len(names):
		return nil, usagef(fs, "missing %s", names[len(args)])
	case len(args) > len(names):
		return nil, usagef(fs, "unexpected argument %q", args[len(names)])
	}
	return args, nil
}

// required checks that each of the string flags names, which fs defines,
// has a non-empty value, reporting the first that has none.
func required(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if fs.Lookup(name).Value.String() == "" {
			return usagef(fs, "-%s is required", name)
		}
	}
	return nil
}

// open opens the database. Commands that only make sense on an existing
// database pass mustExist, so that a mistyped -db fails instead of
// creating an empty file. (A PostgreSQL database exists or Open fails;
// Open creates only the tables.) In a command that arrived on the admin
// socket, it returns the server's Service instead, which closeService
// leaves open (see adminServer.service).
func (e *env) open(mustExist bool, opts *identity.Options) (*identity.Service, error) {
	if e.server != nil {
		return e.server.service(opts)
	}
	svc, _, _, err := e.openStore(mustExist, opts)
	return svc, err
}

// openStore is open that also returns the store under the Service and the
// options it was made with, which serve lends to admin commands.
func (e *env) openStore(mustExist bool, opts *identity.Options) (*identity.Service, store.Store, *identity.Options, error) {
	if mustExist && !pgstore.IsURL(e.dbPath) {
		if _, err := os.Stat(e.dbPath); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("database %s does not exist (create it with: identityd -db %s workspace create SLUG)", e.dbPath, e.dbPath)
		}
	}
	opts, err := tokenOptions(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := openStore(e.dbPath)
	if errors.Is(err, berrors.ErrTimeout) {
		// bbolt holds an exclusive lock on the file; the store gives up
		// after a short wait rather than hang behind a running server.
		// (A server with its admin socket on gets the command instead:
		// see run.)
		return nil, nil, nil, fmt.Errorf("database %s is in use by another process (is identityd serve running?)", e.dbPath)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open database %s: %w", e.dbName(), err)
	}
	svc, err := identity.New(st, opts)
	if err != nil {
		st.Close()
		return nil, nil, nil, fmt.Errorf("open database %s: %w", e.dbName(), err)
	}
	return svc, st, opts, nil
}

// openService opens the Service over -db: a PostgreSQL database when it
// is a postgres:// or postgresql:// URL (package pgstore, default pool
// options; the URL's parameters, such as pool_max_conns or search_path,
// apply; the schema is created or upgraded), else a bbolt file, created
// if needed.
func openService(db string, opts *identity.Options) (*identity.Service, error) {
	st, err := openStore(db)
	if err != nil {
		return nil, err
	}
	svc, err := identity.New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return svc, nil
}

// openStore opens the store of openService: what identity.Open opens for
// a bbolt file, or pgstore's.
func openStore(db string) (store.Store, error) {
	if pgstore.IsURL(db) {
		return pgstore.Open(context.Background(), db, nil)
	}
	return boltstore.Open(db, nil)
}

// dbName is -db as messages and logs show it: a PostgreSQL URL loses its
// password.
func (e *env) dbName() string {
	if !pgstore.IsURL(e.dbPath) {
		return e.dbPath
	}
	u, err := url.Parse(e.dbPath)
	if err != nil {
		return "(a PostgreSQL URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// inWorkspace opens the existing database, runs fn on the workspace slug
// and closes the database again, reporting a failure to close.
func (e *env) inWorkspace(ctx context.Context, slug string, fn func(*identity.Workspace) error) (err error) {
	return e.inWorkspaceWith(ctx, slug, nil, fn)
}

// inWorkspaceWith is inWorkspace with options for the Service.
func (e *env) inWorkspaceWith(ctx context.Context, slug string, opts *identity.Options, fn func(*identity.Workspace) error) (err error) {
	svc, err := e.open(true, opts)
	if err != nil {
		return err
	}
	defer closeService(svc, &err)
	ws, err := workspace(ctx, svc, slug)
	if err != nil {
		return err
	}
	return fn(ws)
}

// workspace returns the workspace slug, with an error that names it.
func workspace(ctx context.Context, svc *identity.Service, slug string) (*identity.Workspace, error) {
	ws, err := svc.GetWorkspace(ctx, slug)
	if errors.Is(err, identity.ErrNotFound) {
		return nil, fmt.Errorf("workspace %q does not exist", slug)
	}
	return ws, err
}

// message renders err for the terminal. An *identity.Error shows its
// message and every field problem, without the library's prefix, and an
// internal error shows its cause: the reader is the operator.
func message(err error) string {
	// Only an error that is itself an *identity.Error is rendered so: one
	// wrapped by a command keeps the context the command added.
	e, ok := err.(*identity.Error)
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case !ok:
		return err.Error()
	case e.Code == identity.CodeInternal && e.Err != nil:
		return e.Message + ": " + e.Err.Error()
	}
	msg := e.Message
	for i, f := range e.Fields {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		msg += sep + f.Field + " " + f.Message
	}
	return msg
}

// closeService closes svc and adds a failure to *err. It leaves open a
// Service that serve lends to the commands of its admin socket.
func closeService(svc *identity.Service, err *error) {
	if _, ok := lent.Load(svc); ok {
		return
	}
	if cerr := svc.Close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("close database: %w", cerr))
	}
}
