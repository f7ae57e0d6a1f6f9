package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore"
)

// maxImportLine bounds one JSON line of user import: generous for a user
// with many attributes, small enough that a file without newlines cannot
// exhaust memory.
const maxImportLine = 16 << 20

// importHelp documents the input of user import; its -h prints it after
// the flags. Keep it in step with identity.ImportedUser, whose JSON form a
// line is.
const importHelp = `Input: JSON Lines, one JSON object per line, one user per object; blank
lines are skipped. user export writes this format. Fields:

  username       string, required. 1-255 of a-z A-Z 0-9 . _ -; unique in
                 the workspace ignoring case
  email          string, required. A plain address (no display name), at
                 most 254 characters; unique in the workspace ignoring case
  fullName       string, required. 1-255 characters, not blank, no control
                 characters
  passwordHash   string, optional. The hash from the old system, in one of:
                   argon2id  $argon2id$v=19$m=M,t=T,p=P$SALT$HASH
                             (m at most 1048576 KiB, t at most 64)
                   bcrypt    $2a$, $2b$ or $2y$, cost at most 16
                   PBKDF2    $pbkdf2-sha256$i=N[,l=L]$SALT$HASH or
                             $pbkdf2-sha256$N$SALT$HASH (also -sha1, -sha512,
                             and passlib's $pbkdf2$ for SHA-1)
                   PBKDF2    Django's pbkdf2_sha256$N$SALT$HASH (or _sha1)
                 PBKDF2 at most 5000000 iterations. Absent or "": the user
                 has no password and cannot log in with one. A hash other
                 than argon2id at the current parameters is replaced at the
                 user's first successful login.
  emailVerified  boolean, default false
  disabled       boolean, default false: true imports the user disabled
  mfaEnabled     boolean, default false
  createdAt      RFC 3339 timestamp, default the time of the import
  attributes     object of string values, default none: keys 1-64
                 characters, values 0-1024
  roles          array of roles assigned directly, each a role name
                 (string; a name the workspace has no role of creates the
                 role) or the id of an existing role (integer)
  groups         array of group names the user is a member of; a name the
                 workspace has no group of creates the group (with no
                 roles: see identityd group grant)
  totp           object, default none: the user's confirmed TOTP second
                 factor (HMAC-SHA1, 6 digits, 30-second steps), which turns
                 mfaEnabled on. Fields:
                   secret         string, required. The shared secret in
                                  base32 (upper or lower case, padding
                                  optional), 10-64 bytes decoded
                   confirmedAt    RFC 3339 timestamp, required: when the
                                  factor was confirmed
                   lastStep       integer >= 0, default 0: the time step
                                  (Unix seconds / 30) of the last code
                                  accepted; codes of it or earlier are
                                  refused as replays
                   recoveryCodes  array of at most 10 base64 strings, each
                                  the 32-byte hash of an unused recovery
                                  code as identityd stores it (user export
                                  writes them; another system's hashes
                                  are of another form)
                 The secret is stored sealed with the key of
                 $IDENTITYD_KEY_ENCRYPTION_KEY when that is set.
  passkeyHandle  string, required with passkeys: the user's WebAuthn user
                 handle, base64url without padding, 1-64 bytes (user
                 export writes it); unique in the workspace
  passkeys       array of at most 100 passkeys (WebAuthn credentials),
                 which keep working where the issuer's host is the same.
                 Fields: id (the credential id, base64url, unique in the
                 workspace), name (1-64 characters), publicKey (the COSE
                 key, base64url), signCount, aaguid (a UUID),
                 backupEligible, backupState, createdAt, lastUsedAt

Any other field is refused, naming the line, so that a misspelt field
(such as "full_name") is not silently dropped; the REST API, by contrast,
ignores unknown members. Imported users emit no user.created event and
get no verification email.

Example line:
  {"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","passwordHash":"$2b$12$...","emailVerified":true,"roles":["admin"],"groups":["eng"]}
`

// userImport imports users from JSON Lines in batches, each all or
// nothing: identityd user import -workspace SLUG [-file F] [-batch N].
func userImport(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace to import into")
	file := fs.String("file", "-", "the JSON Lines `FILE` to read; - is standard input")
	batch := fs.Int("batch", identity.MaxImportBatch, "import `N` users per transaction (1-10000)")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	if *batch < 1 || *batch > identity.MaxImportBatch {
		return usagef(fs, "-batch must be between 1 and %d", identity.MaxImportBatch)
	}
	in, err := openInput(e, *file)
	if err != nil {
		return err
	}
	defer in.Close()
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		im := &importer{ws: ws, size: *batch}
		if err := im.read(ctx, in); err != nil {
			return fmt.Errorf("%w\nimported %d users into workspace %s before the error", err, im.imported, *slug)
		}
		fmt.Fprintf(e.stdout, "imported %d users into workspace %s\n", im.imported, *slug)
		return nil
	})
}

// exportHelp documents the output of user export; its -h prints it after
// the flags.
const exportHelp = `Output: JSON Lines, one user per line in ascending id order, in the
format user import reads (see "identityd user import -h"): username, email,
fullName, passwordHash, emailVerified, disabled, mfaEnabled, createdAt,
attributes, roles (the names of those assigned directly), groups (their
names) and the confirmed TOTP factor (totp: its secret, the time it was
confirmed, the last step accepted and the hashes of the unused recovery
codes). Ids and the update time are not exported; nor are sessions,
tokens, lockout state or a TOTP enrolment not yet confirmed, nor the roles
the groups carry, which are not a user's (grant them again with identityd
group grant). A field at its default (false, empty) is left out. user
import of the file into another workspace or database reproduces the
users, with new ids.

The users are one consistent snapshot, read in one transaction. With -o,
an export that fails leaves FILE as it was; on standard output it stops
where the error came.

The file holds password hashes and TOTP secrets in the clear (a secret
sealed with $IDENTITYD_KEY_ENCRYPTION_KEY is opened, so that variable must
hold the key it was sealed with; user import seals it again with its own):
whoever has it can sign in as any of the users whose hash they crack, and
pass their second factor. Guard it like the database: -o creates the file
readable by its owner only; delete it when it has served.
`

// userExport writes the users of a workspace as JSON Lines: identityd user
// export -workspace SLUG [-o FILE].
func userExport(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace to export")
	out := fs.String("o", "-", "the JSON Lines `FILE` to write, replaced only once the export is complete; - is standard output")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		if *out == "-" {
			w := bufio.NewWriterSize(e.stdout, exportBuffer)
			if _, err := ws.ExportUsersJSONLines(ctx, w); err != nil {
				return err
			}
			return w.Flush()
		}
		if isDatabaseFile(*out, e.dbPath) {
			return fmt.Errorf("%s is the database itself: write the export to another file", *out)
		}
		n, err := e.writeFile(*out, func(w io.Writer) (int, error) {
			return ws.ExportUsersJSONLines(ctx, w)
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "exported %d users from workspace %s\n", n, *slug)
		return nil
	})
}

// isDatabaseFile reports whether name is the bbolt file db, which an
// export renamed over it would destroy.
func isDatabaseFile(name, db string) bool {
	if pgstore.IsURL(db) {
		return false
	}
	a, aerr := os.Stat(name)
	b, berr := os.Stat(db)
	return aerr == nil && berr == nil && os.SameFile(a, b)
}

// exportBuffer is the size of user export's output buffer.
const exportBuffer = 256 << 10

// openInput opens the import file, or standard input for "-".
func openInput(e *env, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(e.stdin), nil
	}
	return e.openFile(name)
}

// importer collects users into batches and imports each full batch.
type importer struct {
	ws       *identity.Workspace
	size     int
	batch    []identity.ImportedUser
	lines    []int // the input line of each user in batch
	imported int
}

// read imports every user of r, then the last partial batch.
func (im *importer) read(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxImportLine)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		u, err := parseImportLine(text)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		im.batch, im.lines = append(im.batch, u), append(im.lines, line)
		if len(im.batch) == im.size {
			if err := im.flush(ctx); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	return im.flush(ctx)
}

// parseImportLine decodes one JSON object. Unknown fields are errors: a
// misspelt "full_name" would otherwise be dropped, and the user refused for
// a missing full name, with nothing pointing at the cause. (Field names
// match ignoring case, as encoding/json does.)
func parseImportLine(text []byte) (identity.ImportedUser, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var u identity.ImportedUser
	if err := dec.Decode(&u); err != nil {
		return identity.ImportedUser{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return identity.ImportedUser{}, errors.New("invalid JSON: more than one value on the line")
	}
	return u, nil
}

// flush imports the collected batch in one transaction.
func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	if _, err := im.ws.ImportUsers(ctx, im.batch); err != nil {
		return im.batchError(err)
	}
	im.imported += len(im.batch)
	im.batch, im.lines = im.batch[:0], im.lines[:0]
	return nil
}

// maxShownProblems bounds the problems listed for a failed batch.
const maxShownProblems = 10

// batchField matches the batch positions the library names problems by:
// "users[7].email", "users[7].attributes.dept".
var batchField = regexp.MustCompile(`users\[(\d+)\](?:\.(\S+))?`)

// batchError describes a failed batch in terms of input lines.
func (im *importer) batchError(err error) error {
	first, last := im.lines[0], im.lines[len(im.lines)-1]
	e, ok := err.(*identity.Error)
	if !ok || len(e.Fields) == 0 {
		return fmt.Errorf("the batch of lines %d-%d was not imported: %s", first, last, message(err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the batch of lines %d-%d was not imported: %s", first, last, e.Message)
	for i, f := range e.Fields {
		if i == maxShownProblems {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Fields)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s %s", im.toLines(f.Field, "line %d: %s"), im.toLines(f.Message, "the %[2]s on line %[1]d"))
	}
	return errors.New(b.String())
}

// toLines rewrites each "users[i].field" in s with format, given the input
// line of user i and the field.
func (im *importer) toLines(s, format string) string {
	return batchField.ReplaceAllStringFunc(s, func(m string) string {
		sub := batchField.FindStringSubmatch(m)
		i, err := strconv.Atoi(sub[1])
		if err != nil || i >= len(im.lines) {
			return m
		}
		return strings.TrimSpace(fmt.Sprintf(format, im.lines[i], sub[2]))
	})
}
