// Package pgtest gives tests a PostgreSQL schema of their own, for the
// tests of pgstore and of anything that runs over it (identityd across
// processes, benchmarks).
//
// The server comes from the environment variable IDENTITY_TEST_POSTGRES
// (EnvURL): a connection URL of a database in which the tests may create
// and drop schemas, for example
//
//	IDENTITY_TEST_POSTGRES='postgres://postgres@localhost:5432/postgres'
//	IDENTITY_TEST_POSTGRES='postgres:///postgres?host=/tmp/pg&user=postgres'
//
// .ci/run starts a throwaway cluster and sets it. Without the variable, a
// test binary starts a throwaway server of its own when its first test
// needs one, if PostgreSQL's server programs are installed (Debian's
// postgresql package; see EnvBin): a cluster made by initdb in a temporary
// directory, listening on a Unix socket in that directory and on no TCP
// port, run as the postgres user when the tests run as root. It serves
// the rest of the test binary and is stopped and removed when the binary
// ends; for that, every package whose tests use pgtest calls Main from
// its TestMain. Starting it takes a second or two.
//
// Without the variable and without PostgreSQL installed, the tests that
// need PostgreSQL skip, and the package says so in one line, unless
// CI=true: there they fail, so that CI never passes without having run
// them.
//
// Each call of URL (or Open) creates a schema with a fresh random name and
// drops it, with everything in it, when the test ends. The URL it returns
// selects that schema through its search_path parameter, so that stores
// opened on it, in this process or another, see only that test's data.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store/pgstore"
)

// EnvURL is the environment variable that holds the connection URL of the
// test server's database.
const EnvURL = "IDENTITY_TEST_POSTGRES"

// cleanupTimeout bounds dropping a test's schema.
const cleanupTimeout = 30 * time.Second

// BaseURL returns the value of EnvURL. Without it, it returns the URL of
// the throwaway server that Main lets it start (see the package
// documentation), or skips the test with a message when PostgreSQL is not
// installed. It fails the test if the server does not start, or if
// PostgreSQL is installed but the package's TestMain does not call Main,
// which stops the server. When the environment variable CI is "true", it
// fails the test instead of starting a server or skipping: CI sets EnvURL
// itself.
func BaseURL(tb testing.TB) string {
	tb.Helper()
	if base := os.Getenv(EnvURL); base != "" {
		return base
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("no PostgreSQL server to test against: set " + EnvURL +
			" to the URL of a database where tests may create schemas (.ci/run starts one)" +
			"; CI=true, so the PostgreSQL tests must run")
	}
	base, err := throwaway()
	if errors.Is(err, errNotInstalled) {
		skipped.Add(1)
		tb.Skip("no PostgreSQL server to test against: " + installHint +
			" to the URL of a database where tests may create schemas")
	}
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return base
}

// URL creates an empty schema with a random name in the database of
// BaseURL, drops it when the test and its subtests end, and returns a
// connection URL (or connection string, if EnvURL is one) whose
// search_path is that schema. Stores opened on it must be closed by then:
// register their Close with tb.Cleanup after calling URL, or use Open.
func URL(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	u, drop, err := Schema(ctx, BaseURL(tb))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := drop(ctx); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return u
}

// Schema is URL for a schema that outlives one test, such as a benchmark
// database built once per process: it creates the schema in the database
// of base and returns its connection URL and the function that drops it.
func Schema(ctx context.Context, base string) (u string, drop func(context.Context) error, err error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema := "identity_test_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{schema}.Sanitize()
	u, err = withSearchPath(base, schema)
	if err != nil {
		// The error would quote the URL, password and all.
		return "", nil, fmt.Errorf("%s is not a valid URL", EnvURL)
	}
	if err := execOnce(ctx, base, "CREATE SCHEMA "+ident); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	drop = func(ctx context.Context) error {
		if err := execOnce(ctx, base, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		return nil
	}
	return u, drop, nil
}

// Open opens a pgstore.Store on a fresh schema (see URL) and closes it
// when the test ends, before the schema is dropped.
func Open(tb testing.TB, opts *pgstore.Options) *pgstore.Store {
	tb.Helper()
	u := URL(tb)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	s, err := pgstore.Open(ctx, u, opts)
	if err != nil {
		tb.Fatalf("pgstore.Open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() }) // a test may have closed it
	return s
}

// execOnce runs one statement on a connection of its own.
func execOnce(ctx context.Context, connString, sql string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// withSearchPath returns connString with its search_path set to schema.
func withSearchPath(connString, schema string) (string, error) {
	if !pgstore.IsURL(connString) {
		// A keyword/value connection string: a later keyword wins.
		return strings.TrimSpace(connString) + " search_path=" + schema, nil
	}
	u, err := url.Parse(connString)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
