// Command identityd serves the identity management REST API and an
// OpenID Provider per workspace over a bbolt database file or a
// PostgreSQL database, and administers it: workspaces, API keys, OAuth
// clients, signing keys, roles and groups, and bulk user imports and
// exports.
//
// Usage:
//
//	identityd [-db FILE] workspace create SLUG
//	identityd [-db FILE] workspace list
//	identityd [-db FILE] workspace smtp -workspace SLUG (-host HOST -from ADDR -verify-url URL [-reset-url URL] [-port N] [-tls MODE] [-from-name NAME] [-username USER [-password-stdin]] [-token-lifetime D] | -off)
//	identityd [-db FILE] workspace policy -workspace SLUG [-lockout-threshold N] [-lockout-duration D] [-lockout=false] [-password-min-length N] [-mfa optional|required] [-require-verified-email=true|false]
//	identityd [-db FILE] workspace throttle -workspace SLUG [-throttle=false] [-per-address COUNT/WINDOW] [-per-login COUNT/WINDOW] [-mail-interval D]
//	identityd [-db FILE] workspace retention -workspace SLUG [-audit-days N] [-succeeded-delivery-days N] [-failed-delivery-days N] [-mail-job-days N] [-ended-session-days N]
//	identityd [-db FILE] workspace branding -workspace SLUG [-display-name NAME] [-accent-color COLOR]
//	identityd [-db FILE] workspace logo -workspace SLUG (-file FILE | -delete)
//	identityd [-db FILE] workspace delete SLUG
//	identityd [-db FILE] key create -workspace SLUG -scopes SCOPE[,SCOPE...] [-name NAME]
//	identityd [-db FILE] key list -workspace SLUG
//	identityd [-db FILE] key revoke -workspace SLUG ID
//	identityd [-db FILE] client create -workspace SLUG -redirect-uri URI[,URI...] [-name NAME] [-public] [-grant-types authorization_code,refresh_token,client_credentials] [-claims groups,roles] [-post-logout-redirect-uri URI[,URI...]]
//	identityd [-db FILE] client list -workspace SLUG
//	identityd [-db FILE] client delete -workspace SLUG CLIENT_ID
//	identityd [-db FILE] client logo -workspace SLUG CLIENT_ID (-file FILE | -delete)
//	identityd [-db FILE] signing-key rotate -workspace SLUG [-alg RS256|ES256]
//	identityd [-db FILE] user import -workspace SLUG [-file F] [-batch N]
//	identityd [-db FILE] user export -workspace SLUG [-o FILE]
//	identityd [-db FILE] user delete -workspace SLUG ID
//	identityd [-db FILE] user roles -workspace SLUG USER
//	identityd [-db FILE] user passkeys -workspace SLUG USER
//	identityd [-db FILE] user verify-email -workspace SLUG USER [-unverified]
//	identityd [-db FILE] role create -workspace SLUG NAME [-description TEXT]
//	identityd [-db FILE] role list -workspace SLUG
//	identityd [-db FILE] role delete -workspace SLUG ROLE
//	identityd [-db FILE] group create -workspace SLUG NAME [-description TEXT]
//	identityd [-db FILE] group list -workspace SLUG
//	identityd [-db FILE] group delete -workspace SLUG GROUP
//	identityd [-db FILE] group add -workspace SLUG GROUP USER
//	identityd [-db FILE] group remove -workspace SLUG GROUP USER
//	identityd [-db FILE] group grant -workspace SLUG GROUP ROLE
//	identityd [-db FILE] group revoke -workspace SLUG GROUP ROLE
//	identityd [-db FILE] audit list -workspace SLUG [-actor kind:id] [-target kind:id] [-action A] [-outcome success|failure] [-since RFC3339] [-until RFC3339] [-limit N] [-cursor C] [-json]
//	identityd [-db FILE] audit export -workspace SLUG [-since T] [-o FILE]
//	identityd [-db FILE] backup -o FILE
//	identityd [-db FILE] compact
//	identityd [-db FILE] metrics
//	identityd [-db FILE] serve [-addr HOST:PORT] [-issuer-base URL] [-allow-private-webhooks] [-access-log=false] [-attempt-timeout D] [-hash-memory-budget BYTES] [-metrics-addr HOST:PORT] [-key-cache-ttl D] [-admin-socket PATH|off] [-trusted-proxies CIDR[,CIDR...]] [-refresh-reuse D] [-audit-log FILE|-]
//
// -db defaults to identity.db in the working directory. It names a bbolt
// file, or, when it starts with postgres:// or postgresql://, a PostgreSQL
// database (see package store/pgstore; the tables are created on first
// use), which any number of identityd processes may share:
//
//	identityd -db 'postgres://identity:secret@db.example.com/identity' serve
//
// Global flags come before the command, the command's own flags after it,
// before or after its arguments; "--" ends them, for an argument that
// starts with "-".
//
// key create prints only the new key, on one line; it is shown once and
// only a hash of it is stored. key list never shows secrets.
//
// client create registers an OAuth client of the workspace and prints its
// id on the first line and, for a confidential client (without -public),
// its secret on the second; the secret is shown once and only a hash of it
// is stored. -grant-types defaults to authorization_code,refresh_token;
// client_credentials is for confidential clients only. -claims groups,roles
// makes the client's tokens carry the user's groups or roles (or both)
// whatever scopes it asks for; without it they carry them only for the
// scopes groups and roles. -post-logout-redirect-uri registers the
// addresses (exact, https or loopback http) to which the provider may send
// the browser after a sign-out the client asked for. client list never
// shows secrets; client delete stops a client at once.
//
// Roles and groups: a user holds a role directly (the REST API, user
// import) or as a member of a group that carries it, and tokens carry the
// sorted names of the user's groups and roles (see client create). role
// create and group create print the new record's id alone on its line.
// role list prints each role's id, name and description; group list each
// group's id, name, number of members, the roles it carries and
// description; both in id order, one line per record. role delete and
// group delete remove the record with every assignment and membership of
// it. group add and group remove change a user's membership of a group,
// group grant and group revoke the roles a group carries; each prints the
// state it leaves ("user 5 (bob) is a member of group 2 (eng)"): add of
// a member and grant of a role the group carries succeed again, while
// remove and revoke of what is not there fail. user roles prints the roles a user holds, each
// once in role id order with its sources: "direct" for a role assigned to
// the user, "group NAME" for each of its groups that carries it:
//
//	ID  NAME   SOURCES
//	3   admin  direct, group eng, group ops
//
// A ROLE or GROUP argument of digits only is an id, anything else a name;
// a USER argument of digits only is an id, one with "@" an email address,
// anything else a username. One the workspace lacks is an error (exit 1)
// that names it.
//
// workspace policy prints the workspace's sign-in policy (lockout on or
// off, its threshold and duration, the password length range, the MFA
// policy) after changing the parts whose flags are given: after
// -lockout-threshold consecutive failed password attempts (default 10) an
// account is locked for -lockout-duration (default 15m); -lockout=false
// turns lockout off; -mfa required makes every user give a second factor
// at sign-in (enrolling one at the next sign-in if they have none), -mfa
// optional (the default) only the users with MFA on;
// -require-verified-email refuses the sign-in of a user whose email address
// is not verified (the page offers a new verification email instead).
//
// workspace throttle prints the limits on failed sign-ins and on reset and
// verification emails after changing those whose flags are given: at most
// -per-address failed sign-ins from one client address (default 50/15m)
// and -per-login naming one login from any address (default 10/15m), each
// COUNT/WINDOW (0/0 restores the default), and one email of each kind per
// address per -mail-interval (default 5m; a repeat reuses the earlier
// email); -throttle=false turns them off. A refused attempt is told to try
// again in N minutes (429 with Retry-After on the protocol endpoints). The
// counts live in each process's memory: several processes over one
// PostgreSQL database each allow the limit (the lockout count is kept in
// the database and is exact across them).
//
// workspace retention prints how many days the workspace keeps the
// records of its audit trail (-audit-days, default 365), webhook
// deliveries that succeeded (-succeeded-delivery-days, default 7) or
// failed (-failed-delivery-days, default 30), finished mail jobs
// (-mail-job-days, default 30) and ended sessions (-ended-session-days,
// default 90), after changing those whose flags are given (each 1-3650);
// serve's retention sweep removes what is older, every minute.
//
// workspace branding prints how the hosted pages and emails present the
// workspace (display name, accent colour, logo) after changing the name
// (-display-name; empty: the slug) or the colour (-accent-color #rrggbb,
// which needs a contrast of 4.5:1 against white). workspace logo and
// client logo set the logo of the workspace's pages and emails, or the one
// the sign-in page shows for a client, from a PNG file (- for standard
// input; at most 100 KiB and 1024 pixels a side, stored re-encoded), or
// remove it with -delete.
//
// user passkeys lists a user's passkeys, oldest first: the credential id,
// the name, when it was registered and last used ("-" for never), the
// authenticator model when it is a well-known one, and whether it may be
// synced to other devices. The REST API removes one
// (DELETE /users/{userId}/passkeys/{id}).
//
// user verify-email marks a user's email address verified, for an
// administrator who checked it another way, or with -unverified not
// verified, so that the user must confirm it again.
//
// signing-key rotate rotates the workspace's token signing keys at once
// (they also rotate by themselves every 30 days): the next key, published
// since the previous rotation, starts signing; the key that signed
// retires and stays published until every token it signed has expired;
// a new next key is made with -alg (default RS256). It prints the id
// (kid) of the key that now signs. When $IDENTITYD_KEY_ENCRYPTION_KEY
// holds 64 hex digits, every command seals new private signing keys
// with that AES-256 key before they are stored and opens them with it;
// give serve the same value.
//
// workspace smtp sets the workspace's SMTP server, with which new users
// and changed email addresses get a verification email that serve's
// dispatcher sends; -off removes it. -tls is starttls (the default), tls
// or none (localhost only); -port 0 means the mode's usual port. The
// password of -username is read from $IDENTITYD_SMTP_PASSWORD or, with
// -password-stdin, from the first line of standard input, never from a
// flag; without one a stored password is kept while host and username
// stay the same.
//
// user import reads JSON Lines (one user per line) from -file, or standard
// input when -file is "-" or absent:
//
//	{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace",
//	 "passwordHash":"$argon2id$v=19$m=19456,t=2,p=1$...","emailVerified":true,
//	 "disabled":false,"attributes":{"dept":"math"},"roles":["admin"],"groups":["eng"]}
//
// The fields are username, email and fullName (required), passwordHash
// (argon2id, bcrypt or PBKDF2 in PHC, passlib or Django form; absent: no
// password), emailVerified, disabled, mfaEnabled, createdAt (RFC 3339),
// attributes, roles (names, or ids of existing roles) and groups (names);
// a role or group name the workspace lacks is created. "identityd user
// import -h" describes each. A field
// not in that list is an error naming the line (the REST API ignores
// unknown members, but a misspelt field in a migration would silently lose
// data). Users are imported in batches of up to identity.MaxImportBatch,
// each batch all or nothing; the counts are reported at the end or at the
// first error.
//
// user export writes every user of the workspace, in id order, as the JSON
// Lines user import reads, to standard output or, with -o, to a file that
// it replaces only once the export is complete (mode 0600), reporting the
// count on standard error: password hashes, attributes, the names of the
// roles assigned directly and of the groups, and the confirmed TOTP factor
// (secret, last step accepted, hashes of the unused recovery codes) are
// exported, ids and update times are not, so user import of the file
// reproduces the users with new ids. The roles groups carry are not a
// user's, and are not exported: grant them again with group grant. The users are one
// consistent snapshot, read in one transaction. The file holds password
// hashes and TOTP secrets in the clear (a secret sealed with
// $IDENTITYD_KEY_ENCRYPTION_KEY is opened for it, and user import seals it
// with its own): guard it like the database.
//
// The audit trail records every change and every sign-in with its actor.
// A command's actor is the operator: kind operator, the user id of the
// process that ran the command (the client's, as the kernel reports it,
// for a command through the admin socket) and that user's name on the
// host, or the id again when the host has no name for it. audit list
// prints one page of a workspace's trail, newest first, as a table (time,
// actor, action, target, outcome, reason, client address), or with -json
// as the JSON of identity.AuditPage; it keeps the records of one actor or
// target (kind:id, such as operator:1000 or user:42; system: for the
// system, which has no id; read as the REST API reads them),
// one action (or, ending in ".", a prefix such as sign_in.), one outcome
// and a time range (-since inclusive, -until exclusive, RFC 3339). When
// there are more, it says on standard error the -cursor that goes on.
// audit export writes every record written since -since (default: all),
// oldest first, as JSON Lines (one identity.AuditRecord a line), to
// standard output or, with -o, to a file it replaces once complete (mode
// 0600); it reads a page at a time, so its memory does not grow with the
// trail, and through the admin socket the client writes the lines as they
// come.
//
// serve listens on -addr (default 127.0.0.1:8080; port 0 picks a free port,
// and the address actually bound is logged), serves the API under
// /t/{slug}/api/v1/, each workspace's OpenID Provider (discovery at
// /t/{slug}/.well-known/openid-configuration, its hosted sign-in page and
// endpoints under /t/{slug}/) with the issuer -issuer-base + /t/{slug}
// (default http:// and the address bound; https is required unless the
// host is localhost or a loopback address), and a liveness check at GET
// /healthz, and logs to
// standard error with log/slog, one line per request unless
// -access-log=false. SIGINT or SIGTERM stops it gracefully: the listener
// closes, in-flight requests get 5 seconds to finish, then the database is
// closed and identityd exits 0. A second signal kills it at once. Every
// acknowledged write is on disk (bbolt fsyncs each commit, PostgreSQL
// commits durably), so even SIGKILL loses none. serve also runs the
// dispatcher of webhook deliveries and verification emails;
// -attempt-timeout (default 15s) bounds each attempt, and a delivery whose
// process died mid-attempt is taken over twice that long after it was
// claimed. -hash-memory-budget (default 268435456 bytes, 256 MiB) bounds
// the memory of the password hashes and verifications computed at once
// (identity.Options.PasswordHashingBudget; argon2id at the default m=19 MiB
// takes 19 MiB): requests beyond it wait their turn. -metrics-addr
// serves the Prometheus metrics (package metrics) at GET /metrics on a
// listener of its own, and logs the address bound ("metrics listening");
// it is off by default. -trusted-proxies lists the reverse proxies (CIDR
// prefixes) whose Forwarded or X-Forwarded-For header names the client's
// address, which throttling counts and sessions record; by default every
// request comes from its connection's peer. -refresh-reuse D (at most 5m,
// default 0: off) lets a client present a used refresh token again within
// D of its use, for an answer it lost, and get new tokens instead of
// having the grant revoked. -audit-log FILE (- for standard output)
// appends every audit record, after its transaction committed, as one
// JSON line (the line of audit export) for a SIEM: through a buffer of
// 10,000 records and one writer, so that a slow file never holds up a
// request. A record that finds the buffer full, or whose write fails, is
// dropped and counted; the next write that succeeds starts with the line
// {"dropped":N,"since":T1,"until":T2}, the records to read again with
// audit export or audit list -since T1 -until T2. A failed write is
// logged at most once a minute. When serve stops, the lines waiting are
// written within 5 seconds.
//
// The log line of each request, the REST API's and the OpenID Provider's
// and hosted pages' alike, gives the method, the route pattern (such as
// /t/:slug/token), the status, the duration, the bytes and, on the
// provider's, the client id; never the path, query, headers or bodies,
// so no token, code, secret or password.
//
// Only one process may hold a bbolt file, so while serve runs, the other
// commands run in it: serve listens on an admin socket, the Unix socket
// FILE.sock beside the database (-admin-socket PATH to choose another,
// -admin-socket=off for none), and a command that finds a server
// answering there sends it its command line and runs in the server,
// against the running Service, as it would run by itself; otherwise it
// opens the database itself. Either way it behaves alike, down to its
// output and exit status: a key revoked through the socket is refused
// from the server's next request on. Standard input and output, the
// environment variables a command reads ($IDENTITYD_SMTP_PASSWORD) and the
// files of -file and -o are the client's, relative to its working
// directory; the key-encryption key is the server's. serve refuses to run
// through the socket. The socket has mode 0600; serve takes commands only
// from its own user or root, and a command uses a socket only if it and
// the server belong to its own user (run the commands as the user that
// runs serve). serve replaces a socket that a killed server left behind,
// and removes its own when it stops; commands running then get the same 5
// seconds as requests. With -admin-socket=off, or on systems other than
// Linux (the server checks its peer with SO_PEERCRED), the other commands
// fail while serve runs with "database FILE is in use by another process".
// Give the global -admin-socket too when serve's is not the default. A
// PostgreSQL database needs no socket (any number of processes may open
// it) and has none by default; -admin-socket PATH gives it one.
//
// backup writes a consistent copy of a bbolt database to FILE: through
// FILE.tmp (mode 0600), synced and renamed into place once complete, so
// FILE is never half written. Through the admin socket it copies the
// database of the running server in one read transaction (bbolt's
// Tx.WriteTo) without stopping its writers: every write acknowledged
// before the backup began is in it. To restore, stop serve and put the
// copy in place of the database file. A PostgreSQL database is backed up
// with pg_dump.
//
// metrics prints the running server's metrics (the Prometheus text
// format, as -metrics-addr serves them) through its admin socket; without
// a server there are none, and it says so.
//
// compact rewrites a bbolt file with only the pages its records use:
// bbolt reuses the pages of deleted records but never gives them back to
// the file system, so a file that once held much more than it holds now
// (after a retention sweep caught up with a backlog, or many deletions)
// stays large. It works offline: stop serve first (a held file is refused,
// and left as it was). The copy is written beside the file, synced and
// renamed over it.
//
// Exit status: 0 on success, 1 on an error, 2 on a usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling so that a
		// second one kills a shutdown that takes too long.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
