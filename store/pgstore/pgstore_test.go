package pgstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)

// update runs fn in s.Update and fails the test if Update fails.
func update(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// connect opens a connection of its own to the database at url.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// withWorkspace returns a store on a fresh schema holding the workspace
// "acme" with user 1 and webhook endpoint 1.
func withWorkspace(t *testing.T, opts *pgstore.Options) *pgstore.Store {
	t.Helper()
	s := pgtest.Open(t, opts)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.PutUser("acme", store.User{ID: 1, Username: "alice", Email: "alice@example.com", FullName: "Alice"}); err != nil {
			return err
		}
		return tx.PutWebhook("acme", store.Webhook{ID: 1, URL: "https://hooks.example.com/", Enabled: true})
	})
	return s
}

func TestIsURL(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"postgres://localhost/db", true},
		{"postgresql://u:p@db.example.com:5432/identity?sslmode=require", true},
		{"postgres:///identity?host=/run/postgresql", true},
		{"identity.db", false},
		{"/var/lib/identity/identity.db", false},
		{"./postgres://", false},
		{"POSTGRES://localhost/db", false},
		{"host=localhost dbname=identity", false},
		{"", false},
	} {
		if got := pgstore.IsURL(c.s); got != c.want {
			t.Errorf("IsURL(%q) = %t, want %t", c.s, got, c.want)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct {
		prefix, want string
		bounded      bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"al", "am", true},
		{"a_", "a`", true},
		{"a%", "a&", true},
		{"é", "ê", true},
		{"zz\u007f", "zz\u0080", true},
		{"x\uD7FF", "x\uE000", true}, // skips the surrogates
		{"a\U0010FFFF", "b", true},
		{"a\U0010FFFF\U0010FFFF", "b", true},
		{"\U0010FFFF", "", false},
		{"\U0010FFFF\U0010FFFF", "", false},
	} {
		got, bounded := pgstore.PrefixEnd(c.prefix)
		if got != c.want || bounded != c.bounded {
			t.Errorf("prefixEnd(%+q) = %+q, %t; want %+q, %t", c.prefix, got, bounded, c.want, c.bounded)
		}
		if bounded && !(c.prefix < got) {
			t.Errorf("prefixEnd(%+q) = %+q, not above the prefix", c.prefix, got)
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	n, err := pgstore.LoadMigrations(pgstore.MigrationFiles)
	if err != nil || n < 1 {
		t.Fatalf("embedded migrations: %d, %v; want at least one", n, err)
	}
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"gap", []string{"0001_a.sql", "0003_c.sql"}},
		{"not from one", []string{"0002_b.sql"}},
		{"twice", []string{"0001_a.sql", "01_a.sql"}},
		{"no number", []string{"0001_a.sql", "next_b.sql"}},
		{"not sql", []string{"0001_a.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range c.files {
				fsys["migrations/"+f] = &fstest.MapFile{Data: []byte("SELECT 1")}
			}
			if _, err := pgstore.LoadMigrations(fsys); err == nil {
				t.Errorf("migrations %v loaded, want an error", c.files)
			}
		})
	}
}

func TestMigrations(t *testing.T) {
	v1 := fstest.MapFS{"migrations/0001_one.sql": {Data: []byte("CREATE TABLE one (x int); INSERT INTO one VALUES (1);")}}
	v2 := fstest.MapFS{
		"migrations/0001_one.sql": v1["migrations/0001_one.sql"],
		"migrations/0002_two.sql": {Data: []byte("INSERT INTO one VALUES (2);")},
	}
	broken := fstest.MapFS{
		"migrations/0001_one.sql": v1["migrations/0001_one.sql"],
		"migrations/0002_two.sql": v2["migrations/0002_two.sql"],
		"migrations/0003_bad.sql": {Data: []byte("INSERT INTO one VALUES (3); SELECT no_such_column FROM one;")},
	}
	url := pgtest.URL(t)
	conn := connect(t, url)
	rows := func() []int {
		t.Helper()
		got, err := pgx.CollectRows(must(conn.Query(t.Context(), "SELECT x FROM one ORDER BY x")), pgx.RowTo[int])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	versions := func() []int {
		t.Helper()
		got, err := pgx.CollectRows(must(conn.Query(t.Context(), "SELECT version FROM schema_migrations ORDER BY version")), pgx.RowTo[int])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, step := range []struct {
		name         string
		fsys         fstest.MapFS
		wantErr      string
		wantRows     []int
		wantVersions []int
	}{
		{"first", v1, "", []int{1}, []int{1}},
		{"again changes nothing", v1, "", []int{1}, []int{1}},
		{"a new migration applies alone", v2, "", []int{1, 2}, []int{1, 2}},
		{"a failing migration leaves nothing", broken, "0003_bad.sql", []int{1, 2}, []int{1, 2}},
		{"an older build refuses a newer schema", v1, "newer than this build", []int{1, 2}, []int{1, 2}},
	} {
		t.Run(step.name, func(t *testing.T) {
			_, err := pgstore.Migrate(t.Context(), conn, step.fsys)
			switch {
			case step.wantErr == "" && err != nil:
				t.Fatalf("Migrate: %v", err)
			case step.wantErr != "" && (err == nil || !strings.Contains(err.Error(), step.wantErr)):
				t.Fatalf("Migrate error = %v, want one that mentions %q", err, step.wantErr)
			}
			if diff := cmp.Diff(step.wantRows, rows()); diff != "" {
				t.Errorf("rows mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(step.wantVersions, versions()); diff != "" {
				t.Errorf("schema_migrations mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// The lock is released whatever happened: another session takes it.
	other := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), other, v2); err != nil {
		t.Errorf("Migrate from another session: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestOpenConcurrently opens stores on one fresh schema at the same moment,
// as processes starting together do: each migration is applied once and
// every Open succeeds.
func TestOpenConcurrently(t *testing.T) {
	const n = 6
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	stores := make([]*pgstore.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = pgstore.Open(t.Context(), url, &pgstore.Options{MaxConns: 2})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d: %v", i, err)
			continue
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	want, err := pgstore.LoadMigrations(pgstore.MigrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	var applied, distinct int
	if err := connect(t, url).QueryRow(t.Context(),
		"SELECT count(*), count(DISTINCT version) FROM schema_migrations").Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if applied != want || distinct != want {
		t.Errorf("schema_migrations holds %d rows, %d versions; want %d once each", applied, distinct, want)
	}
	// The stores work on the one schema.
	update(t, stores[0], func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "acme"}) })
	if err := stores[n-1].View(t.Context(), func(tx store.Tx) error { _, err := tx.Workspace("acme"); return err }); err != nil {
		t.Errorf("another store does not see the workspace: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	noSchema, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := noSchema.Query()
	q.Set("search_path", "no_such_schema")
	noSchema.RawQuery = q.Encode()
	for _, c := range []struct {
		name, url, want string
	}{
		{"bad URL", "postgres://[::1", "pgstore"},
		{"no schema", noSchema.String(), "no schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			s, err := pgstore.Open(ctx, c.url, nil)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", c.url)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open error = %v, want one that mentions %q", err, c.want)
			}
		})
	}
}

// TestRetry makes one transaction lose a write-write race on purpose: it
// reads a row, another Update changes the row and commits, then it writes
// the row. PostgreSQL fails it with a serialization failure, and Update
// runs it again unless retrying is off.
func TestRetry(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      pgstore.Options
		wantCalls int
		wantErr   bool
		wantAlone uint64
	}{
		{"retried", pgstore.Options{}, 2, false, 0},
		{"retried alone", pgstore.Options{OptimisticAttempts: 1}, 2, false, 1},
		{"retrying off", pgstore.Options{MaxAttempts: 1}, 1, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := withWorkspace(t, &c.opts)
			calls := 0
			err := s.Update(t.Context(), func(tx store.Tx) error {
				calls++
				attrs, err := tx.UserAttributes("acme", 1)
				if err != nil {
					return err
				}
				if calls == 1 {
					// Another transaction commits a change of the row this
					// one is about to write, after this one's snapshot.
					update(t, s, func(tx store.Tx) error { return tx.PutUserAttribute("acme", 1, "n", "other") })
				}
				return tx.PutUserAttribute("acme", 1, "n", attrs["n"]+"mine")
			})
			if calls != c.wantCalls {
				t.Errorf("fn called %d times, want %d", calls, c.wantCalls)
			}
			var pgErr *pgconn.PgError
			if c.wantErr {
				if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
					t.Errorf("Update error = %v, want a serialization failure", err)
				}
				if st := s.Stats(); st.GaveUp != 1 || st.Retries != 0 {
					t.Errorf("Stats = %+v, want 1 given up, no retry", st)
				}
				return
			}
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if st := s.Stats(); st.Retries != 1 || st.GaveUp != 0 || st.Alone != c.wantAlone {
				t.Errorf("Stats = %+v, want 1 retry, %d alone", st, c.wantAlone)
			}
			var attrs map[string]string
			if err := s.View(t.Context(), func(tx store.Tx) (err error) {
				attrs, err = tx.UserAttributes("acme", 1)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"n": "othermine"}, attrs); diff != "" {
				t.Errorf("attributes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHotRow races many read-modify-write Updates of one row, more at
// once than the conformance suite does: none gives up, since the attempt
// after the optimistic ones runs alone.
func TestHotRow(t *testing.T) {
	const writers = 40
	s := withWorkspace(t, &pgstore.Options{MaxConns: 20})
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			err := s.Update(context.Background(), func(tx store.Tx) error {
				attrs, err := tx.UserAttributes("acme", 1)
				if err != nil {
					return err
				}
				return tx.PutUserAttribute("acme", 1, "n", attrs["n"]+"x")
			})
			if err != nil {
				t.Errorf("Update: %v", err)
			}
		})
	}
	wg.Wait()
	var attrs map[string]string
	if err := s.View(t.Context(), func(tx store.Tx) (err error) {
		attrs, err = tx.UserAttributes("acme", 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := len(attrs["n"]); got != writers {
		t.Errorf("%d increments kept, want %d", got, writers)
	}
	st := s.Stats()
	if st.GaveUp != 0 || st.MostAttempts > pgstore.DefaultOptimisticAttempts+1 {
		t.Errorf("Stats = %+v; want none given up, none beyond attempt %d", st, pgstore.DefaultOptimisticAttempts+1)
	}
	t.Logf("%+v", st)
}

// TestClaimDeliverySkipsLocked holds one claim open and checks that a
// concurrent claim of the same delivery returns, as taken,
// instead of waiting for the first.
func TestClaimDeliverySkipsLocked(t *testing.T) {
	s := withWorkspace(t, nil)
	d := store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1, EventID: "evt_1", EventType: "user.created", Status: store.DeliveryPending, NextAttemptAt: t0}
	update(t, s, func(tx store.Tx) error { return tx.PutDelivery("acme", d) })

	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(tx store.Tx) error {
			cur, ok, err := tx.ClaimDelivery("acme", 1)
			if err != nil || !ok {
				return fmt.Errorf("first claim = %t, %v", ok, err)
			}
			select {
			case held <- struct{}{}:
			default: // a retry: the test has moved on
			}
			<-release
			cur.LeaseUntil, cur.LeaseOwner = t0.Add(time.Hour), "first"
			return tx.PutDelivery("acme", cur)
		})
	}()
	<-held

	// The first holds its row lock until release, which comes only after
	// the second claim returned: a claim that waited for the lock would
	// wait until ctx ends, and fail. The bound is far beyond what a claim
	// that skips the row takes on a loaded machine.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var ok bool
	err := s.Update(ctx, func(tx store.Tx) (err error) {
		_, ok, err = tx.ClaimDelivery("acme", 1)
		return err
	})
	if err != nil || ok {
		t.Errorf("second claim while the first holds the delivery = %t, %v; want false, nil (an error here: it waited for the first)", ok, err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first claim: %v", err)
	}
	err = s.View(t.Context(), func(tx store.Tx) error {
		cur, err := tx.Delivery("acme", 1)
		if err == nil && cur.LeaseOwner != "first" {
			err = fmt.Errorf("lease owner %q, want first", cur.LeaseOwner)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestText checks strings PostgreSQL text cannot hold: a write of one to
// a text column is refused without failing the transaction, a lookup of
// one finds nothing, and the bytea columns keep them.
func TestText(t *testing.T) {
	s := withWorkspace(t, nil)
	var refused []error
	update(t, s, func(tx store.Tx) error {
		refused = []error{
			tx.PutUser("acme", store.User{ID: 2, Username: "bob", Email: "bob@example.com", FullName: "Bob\x00"}),
			tx.PutUser("acme", store.User{ID: 2, Username: "bob\xff", Email: "bob@example.com", FullName: "Bob"}),
			tx.PutWebhook("acme", store.Webhook{ID: 2, URL: "https://h.example/", Events: []string{"a\x00"}}),
			tx.PutAPIKey(store.APIKey{ID: "k\xff", Workspace: "acme"}),
			tx.PutWorkspace(store.Workspace{Slug: "a\x00"}),
			tx.PutVerificationToken("acme", store.VerificationToken{ID: "t", Purpose: "reset\x00"}),
			tx.PutSession("acme", store.Session{ID: "s", UserAgent: "ua\xff"}),
			tx.PutSession("acme", store.Session{ID: "s", AMR: []string{"pwd\x00"}}),
			tx.PutAuthRequest("acme", store.AuthRequest{ID: "r", UILocales: "de\x00"}),
			tx.PutGrant("acme", store.Grant{ID: "g", AMR: []string{"\xff"}}),
			tx.PutRefreshToken("acme", store.RefreshToken{ID: "rt", GrantID: "g", SuccessorID: "rt\x00"}),
			tx.PutAsset("acme", store.Asset{Name: "logo\x00"}),
			tx.PutAsset("acme", store.Asset{Name: "logo", ContentType: "image/\xff"}),
		}
		// The transaction goes on.
		if err := tx.PutUser("acme", store.User{ID: 2, Username: "bob", Email: "bob@example.com", FullName: "Bob"}); err != nil {
			return err
		}
		if err := tx.PutUserAttribute("acme", 2, "k\x00\xff", "v\x00\xff"); err != nil {
			return err
		}
		return tx.PutClaimMapper("acme", store.ClaimMapper{AttributeKey: "k\x00\xff", ClaimName: "c\x00"})
	})
	for i, err := range refused {
		if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
			t.Errorf("write #%d of an unstorable string: error = %v, want a refusal of its own", i, err)
		}
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		for _, lookup := range []struct {
			name string
			err  error
		}{
			{"UserIDByUsername", second(tx.UserIDByUsername("acme", "bob\x00"))},
			{"UserIDByEmail", second(tx.UserIDByEmail("acme", "\xff"))},
			{"APIKey", second(tx.APIKey("k\xff"))},
			{"Workspace", second(tx.Workspace("acme\x00"))},
			{"User in a workspace named with NUL", second(tx.User("acme\x00", 1))},
			{"VerificationToken", second(tx.VerificationToken("acme", "t\x00"))},
			{"Asset", second(tx.Asset("acme", "logo\x00"))},
		} {
			if !errors.Is(lookup.err, store.ErrNotFound) {
				t.Errorf("%s: error = %v, want ErrNotFound", lookup.name, lookup.err)
			}
		}
		users, total, err := tx.Users("acme", store.UserQuery{Prefix: "b\x00", Limit: 10})
		if err != nil || total != 0 || len(users) != 0 {
			t.Errorf("Users(prefix with NUL) = %v, %d, %v; want none", users, total, err)
		}
		attrs, err := tx.UserAttributes("acme", 2)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(map[string]string{"k\x00\xff": "v\x00\xff"}, attrs); diff != "" {
			t.Errorf("UserAttributes mismatch (-want +got):\n%s", diff)
		}
		mappers, err := tx.ClaimMappers("acme")
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.ClaimMapper{{AttributeKey: "k\x00\xff", ClaimName: "c\x00"}}, mappers); diff != "" {
			t.Errorf("ClaimMappers mismatch (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestUserForeignKeys checks that roles, attributes and memberships need
// their user, and that being refused leaves the transaction usable.
func TestUserForeignKeys(t *testing.T) {
	s := withWorkspace(t, nil)
	var errs []error
	update(t, s, func(tx store.Tx) error {
		errs = []error{tx.AddUserRole("acme", 2, 7), tx.PutUserAttribute("acme", 2, "k", "v"), tx.AddGroupMember("acme", 1, 2)}
		return tx.AddUserRole("acme", 1, 7)
	})
	for i, err := range errs {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("write #%d for a missing user: error = %v, want ErrNotFound", i, err)
		}
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		roles, err := tx.UserRoles("acme", 1)
		if err == nil && !cmp.Equal(roles, []int64{7}) {
			err = fmt.Errorf("UserRoles = %v, want [7]", roles)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestUpdateRunsToItsEnd cancels the context while fn runs: the
// transaction still commits, as store.Store promises.
func TestUpdateRunsToItsEnd(t *testing.T) {
	s := withWorkspace(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Update(ctx, func(tx store.Tx) error {
		cancel()
		if err := tx.PutUserAttribute("acme", 1, "k", "v"); err != nil {
			return err
		}
		return tx.PutUserAttribute("acme", 1, "k2", "v2")
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	var attrs map[string]string
	if err := s.View(t.Context(), func(tx store.Tx) (err error) {
		attrs, err = tx.UserAttributes("acme", 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"k": "v", "k2": "v2"}, attrs); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
}

// TestRulesAcrossStores runs the identity package's concurrency rules over
// several Stores on one schema, each with a pool of its own: to the
// database they are separate processes. Exactly one of many racing
// creates of a username wins, and racing mappers stop at the limit.
func TestRulesAcrossStores(t *testing.T) {
	const stores = 4
	url := pgtest.URL(t)
	var svcs []*identity.Service
	for range stores {
		st, err := pgstore.Open(t.Context(), url, &pgstore.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := identity.New(st, &identity.Options{PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		svcs = append(svcs, svc)
	}
	ctx := t.Context()
	if _, err := svcs[0].CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	workspaces := make([]*identity.Workspace, stores)
	for i, svc := range svcs {
		ws, err := svc.GetWorkspace(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		workspaces[i] = ws
	}

	t.Run("Usernames", func(t *testing.T) {
		const n = 40
		wins := race(t, n, identity.CodeConflict, func(i int) error {
			username := "racer"
			if i%2 == 1 {
				username = "RACER"
			}
			_, err := workspaces[i%stores].CreateUser(ctx, identity.NewUser{
				Username: username, Email: fmt.Sprintf("racer%d@example.com", i),
				FullName: "Racer", Password: "s3cret-passphrase",
			})
			return err
		})
		list, err := workspaces[0].ListUsers(ctx, "racer", nil)
		if err != nil {
			t.Fatal(err)
		}
		if wins != 1 || list.Total != 1 {
			t.Errorf("%d wins, %d users; want 1 and 1 (the other %d conflicts)", wins, list.Total, n-1)
		}
	})

	t.Run("Emails", func(t *testing.T) {
		wins := race(t, 40, identity.CodeConflict, func(i int) error {
			_, err := workspaces[i%stores].CreateUser(ctx, identity.NewUser{
				Username: fmt.Sprintf("mail%d", i), Email: "Shared@Example.com",
				FullName: "Shared", Password: "s3cret-passphrase",
			})
			return err
		})
		if wins != 1 {
			t.Errorf("%d creates with one email succeeded, want 1", wins)
		}
	})

	t.Run("Workspaces", func(t *testing.T) {
		wins := race(t, 12, identity.CodeConflict, func(i int) error {
			_, err := svcs[i%stores].CreateWorkspace(ctx, "beta", nil)
			return err
		})
		if wins != 1 {
			t.Errorf("%d creates of one workspace succeeded, want 1", wins)
		}
	})

	t.Run("MapperLimit", func(t *testing.T) {
		wins := race(t, 30, identity.CodeLimitReached, func(i int) error {
			_, err := workspaces[i%stores].SetClaimMapper(ctx, fmt.Sprintf("attr%02d", i), identity.ClaimMapperSpec{ClaimName: fmt.Sprintf("claim%02d", i)})
			return err
		})
		mappers, err := workspaces[0].ListClaimMappers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if wins != identity.MaxClaimMappers || len(mappers) != identity.MaxClaimMappers {
			t.Errorf("%d mappers created, %d stored; want %d", wins, len(mappers), identity.MaxClaimMappers)
		}
	})
}

// race runs fn(0) ... fn(n-1) at once and returns how many succeeded. A
// call that fails must fail with the loser's code; any other error fails
// the test.
func race(t *testing.T, n int, loser identity.Code, fn func(i int) error) int {
	t.Helper()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			switch err := fn(i); identity.ErrorCode(err) {
			case "":
				wins.Add(1)
			case loser:
			default:
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	return int(wins.Load())
}

// TestUserCounts checks the user count that an unfiltered listing reports
// against the users there are, through inserts, replacements and a
// rollback, within a transaction and after it.
func TestUserCounts(t *testing.T) {
	url := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	conn := connect(t, url)
	u := func(id int64) store.User {
		return store.User{ID: id, Username: fmt.Sprintf("u%d", id), Email: fmt.Sprintf("u%d@example.com", id), FullName: "U"}
	}
	total := func(tx store.Tx) int {
		t.Helper()
		_, n, err := tx.Users("acme", store.UserQuery{Limit: 1})
		if err != nil {
			t.Fatalf("Users: %v", err)
		}
		return n
	}
	check := func(want int) {
		t.Helper()
		var counted, rows int
		err := conn.QueryRow(t.Context(), `SELECT (SELECT coalesce(sum(n), 0) FROM user_chunks WHERE workspace = 'acme'),
			(SELECT count(*) FROM users WHERE workspace = 'acme')`).Scan(&counted, &rows)
		if err != nil {
			t.Fatal(err)
		}
		if counted != want || rows != want {
			t.Errorf("user_chunks says %d, users holds %d; want %d", counted, rows, want)
		}
		if err := s.View(t.Context(), func(tx store.Tx) error {
			if got := total(tx); got != want {
				t.Errorf("Users total = %d, want %d", got, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "acme"}) })
	check(0)
	var seen []int
	update(t, s, func(tx store.Tx) error {
		seen = nil
		for id := int64(1); id <= 3; id++ {
			if err := tx.PutUser("acme", u(id)); err != nil {
				return err
			}
			seen = append(seen, total(tx))
		}
		if err := tx.PutUser("acme", u(2)); err != nil { // replaced, not new
			return err
		}
		seen = append(seen, total(tx))
		return nil
	})
	if diff := cmp.Diff([]int{1, 2, 3, 3}, seen); diff != "" {
		t.Errorf("totals inside the transaction mismatch (-want +got):\n%s", diff)
	}
	check(3)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		for id := int64(4); id <= 6; id++ {
			if err := tx.PutUser("acme", u(id)); err != nil {
				return err
			}
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("Update succeeded, want its error")
	}
	check(3)
	// Users spread over three chunks of ids, and a deep page read within
	// the transaction that wrote them and after.
	deep := func(tx store.Tx) ([]int64, int) {
		t.Helper()
		users, total, err := tx.Users("acme", store.UserQuery{Offset: 2400, Limit: 3})
		if err != nil {
			t.Fatalf("Users: %v", err)
		}
		var ids []int64
		for _, u := range users {
			ids = append(ids, u.ID)
		}
		return ids, total
	}
	var inside []int64
	var insideTotal int
	update(t, s, func(tx store.Tx) error {
		for id := int64(4); id <= 2500; id++ {
			if _, err := tx.NextID("acme", store.SeqUsers); err != nil {
				return err
			}
			if err := tx.PutUser("acme", u(id)); err != nil {
				return err
			}
		}
		inside, insideTotal = deep(tx)
		return nil
	})
	if diff := cmp.Diff([]int64{2401, 2402, 2403}, inside); diff != "" || insideTotal != 2500 {
		t.Errorf("deep page inside the transaction: total %d, want 2500; ids (-want +got):\n%s", insideTotal, diff)
	}
	check(2500)
	if err := s.View(t.Context(), func(tx store.Tx) error {
		ids, total := deep(tx)
		if diff := cmp.Diff([]int64{2401, 2402, 2403}, ids); diff != "" || total != 2500 {
			t.Errorf("deep page: total %d, want 2500; ids (-want +got):\n%s", total, diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var next int64
	update(t, s, func(tx store.Tx) (err error) {
		next, err = tx.NextID("acme", store.SeqUsers)
		return err
	})
	if next != 2498 {
		t.Errorf("NextID after 2497 draws in one transaction = %d, want 2498", next)
	}
}

// TestDeepOffsets pages through users whose ids straddle chunks, with
// gaps and negative ids, at offsets that need the chunk counts.
func TestDeepOffsets(t *testing.T) {
	s := withWorkspace(t, nil) // holds user 1
	ids := []int64{-5000, -1025, -1024, -1, 1}
	for id := int64(2); id <= 1500; id++ {
		ids = append(ids, id)
	}
	ids = append(ids, 2047, 2048, 4096, 1<<40)
	update(t, s, func(tx store.Tx) error {
		for _, id := range ids[:len(ids)-200] {
			if id == 1 {
				continue
			}
			if err := tx.PutUser("acme", store.User{ID: id, Username: fmt.Sprintf("u%d", id), Email: fmt.Sprintf("u%d@example.com", id)}); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx store.Tx) error { // a second transaction: counts add up
		for _, id := range ids[len(ids)-200:] {
			if err := tx.PutUser("acme", store.User{ID: id, Username: fmt.Sprintf("u%d", id), Email: fmt.Sprintf("u%d@example.com", id)}); err != nil {
				return err
			}
		}
		return nil
	})
	n := len(ids)
	err := s.View(t.Context(), func(tx store.Tx) error {
		for _, offset := range []int{0, 1, 1023, 1024, 1025, 1027, 1300, n - 5, n - 1, n, n + 7} {
			for _, limit := range []int{0, 1, 7, 50} {
				users, total, err := tx.Users("acme", store.UserQuery{Offset: offset, Limit: limit})
				if err != nil {
					return err
				}
				var got []int64
				for _, u := range users {
					got = append(got, u.ID)
				}
				want := ids[min(offset, n):min(offset+limit, n)]
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || total != n {
					t.Errorf("Users(offset %d, limit %d): total %d, want %d; ids (-want +got):\n%s", offset, limit, total, n, diff)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeFromPreviousRelease brings a schema that the previous
// release created and filled (migration 0001 only, mail jobs told apart by
// a NULL endpoint_id alone) up to date with Open, and checks that its jobs
// read back with their kinds and stay due, and its verification tokens
// with the purpose of email verification.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	first, err := fs.ReadFile(pgstore.MigrationFiles, "migrations/0001_schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	// A released migration is never edited: this is the previous release's.
	const previousSHA256 = "386792df5e5658de656124fd5b376245b873ae7d3ca33900c34d9282d17b2a01"
	if sum := fmt.Sprintf("%x", sha256.Sum256(first)); sum != previousSHA256 {
		t.Fatalf("migrations/0001_schema.sql has changed since the previous release (sha256 %s)", sum)
	}
	previous := fstest.MapFS{"migrations/0001_schema.sql": {Data: first}}
	url := pgtest.URL(t)
	conn := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), conn, previous); err != nil {
		t.Fatalf("Migrate to the previous release's schema: %v", err)
	}
	// The rows as the previous release's pgstore wrote them: workspace
	// acme, endpoint 1, a pending mail job 1 and a pending delivery 2, and
	// a verification token, which has no purpose yet.
	zero := time.Time{}
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO workspaces (slug, created_at, settings) VALUES ('acme', $1, '\\x7b7d')", []any{t0}},
		{`INSERT INTO webhooks (workspace, id, url, description, events, enabled, created_at, secret, failing_since, version)
			VALUES ('acme', 1, 'https://hooks.example.com/', '', '{user.created}', true, $1, 'whsec_x', $2, 1)`, []any{t0, zero}},
		{`INSERT INTO deliveries (workspace, id, endpoint_id, event_id, event_type, payload, created_at,
				status, attempts, next_attempt_at, lease_until, lease_owner, last_attempt_at, last_status, last_error, due_at)
			VALUES ('acme', 1, NULL, 'msg_1', 'email.verification', '\x7b7d', $1, 'pending', 0, $1, $2, '', $2, 0, '', $1),
				('acme', 2, 1, 'msg_2', 'user.created', '\x7b7d', $1, 'pending', 0, $1, $2, '', $2, 0, '', $1)`, []any{t0, zero}},
		{`INSERT INTO verification_tokens (workspace, id, user_id, email, secret_hash, created_at, expires_at, used_at)
			VALUES ('acme', 'tok-old', 1, 'alice@example.com', '\x68617368', $1, $2, $3)`, []any{t0, t0.Add(24 * time.Hour), zero}},
	} {
		if _, err := conn.Exec(t.Context(), stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}

	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	mail := store.Delivery{
		ID: 1, Kind: store.JobMail, EventID: "msg_1", EventType: "email.verification", Payload: []byte("{}"),
		CreatedAt: t0, Status: store.DeliveryPending, NextAttemptAt: t0,
	}
	hook := store.Delivery{
		ID: 2, Kind: store.JobWebhook, EndpointID: 1, EventID: "msg_2", EventType: "user.created", Payload: []byte("{}"),
		CreatedAt: t0, Status: store.DeliveryPending, NextAttemptAt: t0,
	}
	err = s.View(t.Context(), func(tx store.Tx) error {
		mails, err := tx.MailJobs("acme")
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.Delivery{mail}, mails); diff != "" {
			t.Errorf("MailJobs mismatch (-want +got):\n%s", diff)
		}
		hooks, err := tx.Deliveries("acme", 1)
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.Delivery{hook}, hooks); diff != "" {
			t.Errorf("Deliveries(1) mismatch (-want +got):\n%s", diff)
		}
		due, err := tx.DueDeliveries(t0, 10)
		if err != nil {
			return err
		}
		want := []store.QueuedDelivery{{Workspace: "acme", Delivery: mail}, {Workspace: "acme", Delivery: hook}}
		if diff := cmp.Diff(want, due); diff != "" {
			t.Errorf("DueDeliveries mismatch (-want +got):\n%s", diff)
		}
		// The token of the previous release is an email verification token.
		tok, err := tx.VerificationToken("acme", "tok-old")
		if err != nil {
			return err
		}
		if diff := cmp.Diff(store.VerificationToken{
			ID: "tok-old", UserID: 1, Email: "alice@example.com", SecretHash: []byte("hash"),
			CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), Purpose: store.PurposeVerifyEmail,
		}, tok); diff != "" {
			t.Errorf("VerificationToken(tok-old) mismatch (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	// The upgraded table takes new jobs of both kinds.
	update(t, s, func(tx store.Tx) error {
		m := mail
		m.ID = 3
		return tx.PutDelivery("acme", m)
	})
}
