package identity_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// Benchmarks run over real databases filled through ImportUsers with one
// precomputed argon2id hash, so loading a million users does not pay the
// hashing cost a million times. Each size is built once per process.
// -bench.store picks the store: a bbolt file, or a fresh schema on the
// PostgreSQL server of IDENTITY_TEST_POSTGRES, or without it on a
// throwaway server (see package pgtest).
//
//	go test -run '^$' -bench . -benchtime 2s -bench.users 10000,1000000
//	go test -run '^$' -bench . -bench.store postgres -bench.users 100000
//
// -bench.dir keeps the bbolt files in a directory between runs: a file
// is built once (to users-v3-N.db.partial, renamed when complete) and
// reused by every later run, which is what makes 10,000,000 users
// affordable (see scripts/bench10m.sh).
var (
	benchUsers = flag.String("bench.users", "10000,1000000", "comma-separated user counts of the benchmark databases")
	benchStore = flag.String("bench.store", "bolt", "the store of the benchmark databases: bolt or postgres")
	benchKeep  = flag.String("bench.dir", "", "a directory that keeps the bbolt benchmark databases between runs")
)

const benchMappers = 5

type benchDB struct {
	svc *identity.Service
	ws  *identity.Workspace
	n   int
}

var (
	benchMu  sync.Mutex
	benchDBs = map[int]*benchDB{}
	benchDir string
	// benchDrops drop the PostgreSQL schemas of benchDBs.
	benchDrops []func(context.Context) error
)

// TestMain closes the benchmark databases and drops their schemas after
// the tests, before pgtest.Main stops the throwaway PostgreSQL server it
// may have started (see package pgtest).
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(pgtest.Main(func() int {
		code := m.Run()
		for _, db := range benchDBs {
			db.svc.Close()
		}
		for _, drop := range benchDrops {
			if err := drop(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, "drop benchmark schema:", err)
			}
		}
		if benchDir != "" && benchDir != *benchKeep {
			os.RemoveAll(benchDir)
		}
		return code
	}))
}

// openBenchService opens a new, empty database of the -bench.store kind
// that lives as long as the process: a bbolt file named name in benchDir,
// or a PostgreSQL schema.
func openBenchService(b *testing.B, name string) *identity.Service {
	b.Helper()
	var target string
	switch *benchStore {
	case "bolt":
		if benchDir == "" && *benchKeep != "" {
			if err := os.MkdirAll(*benchKeep, 0o700); err != nil {
				b.Fatal(err)
			}
			benchDir = *benchKeep
		}
		if benchDir == "" {
			dir, err := os.MkdirTemp("", "identity-bench")
			if err != nil {
				b.Fatal(err)
			}
			benchDir = dir
		}
		target = filepath.Join(benchDir, name)
	case "postgres":
		url, drop, err := pgtest.Schema(context.Background(), pgtest.BaseURL(b))
		if err != nil {
			b.Fatal(err)
		}
		benchDrops = append(benchDrops, drop)
		target = url
	default:
		b.Fatalf("-bench.store %q: want bolt or postgres", *benchStore)
	}
	svc, err := openBenchTarget(target)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

func benchSizes(b *testing.B) []int {
	var sizes []int
	for _, f := range strings.Split(*benchUsers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1000 {
			b.Fatalf("bad -bench.users entry %q (want integers >= 1000)", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func benchUsername(i int) string { return fmt.Sprintf("user%07d", i) }

// The benchmark users' first names (one per letter, so that a one-letter
// search matches a 26th of them) and last names.
var (
	benchFirstNames = []string{"Ada", "Ben", "Cara", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivan", "Jo", "Kara", "Liam", "Mia",
		"Noor", "Omar", "Pia", "Quinn", "Ravi", "Sara", "Tom", "Uma", "Vik", "Wen", "Xia", "Yara", "Zoe"}
	benchLastNames = []string{"Lee", "Kim", "Diaz", "Shah", "Berg", "Moss", "Cole", "Ruiz", "Wu", "Otto"}
)

// benchUser returns the i-th benchmark user (from 1): username
// user0000123, full name "Kara Diaz" (first name by i mod 26, last name
// by i/26 mod 10), email kara.diaz123@example.com, and three attributes.
// Every tenth user is a member of the group "everyone-10" (which carries
// the role "reader"), and every hundredth also holds "reader" directly;
// user 1 is besides a member of the ten groups "team-0" to "team-9", each
// carrying a role of its own (see buildBenchAccess).
func benchUser(i int) identity.ImportedUser {
	first, last := benchFirstNames[i%26], benchLastNames[i/26%10]
	u := identity.ImportedUser{
		Username: benchUsername(i), FullName: first + " " + last, PasswordHash: benchHash,
		Email:      strings.ToLower(first+"."+last) + strconv.Itoa(i) + "@example.com",
		Attributes: map[string]string{"department": "dept" + strconv.Itoa(i%50), "tier": "gold", "employee_id": strconv.Itoa(i)},
	}
	if i%10 == 0 {
		u.Groups = []string{benchBigGroup}
	}
	if i%100 == 0 {
		u.Roles = []identity.RoleRef{identity.RoleName(benchBigRole)}
	}
	if i == 1 {
		for t := range benchTeams {
			u.Groups = append(u.Groups, fmt.Sprintf("team-%d", t))
		}
	}
	return u
}

// The groups and roles of the benchmark database.
const (
	benchBigGroup = "everyone-10"
	benchBigRole  = "reader"
	benchTeams    = 10
)

// buildBenchAccess creates, before the users are imported, the groups and
// roles benchUser names, with what each group carries: so that the
// import's memberships find the roles in place, and no group's role is
// assigned over a million members afterwards.
func buildBenchAccess(b *testing.B, ws *identity.Workspace) {
	ctx := context.Background()
	carry := func(group, role string) {
		g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: group})
		if err != nil {
			b.Fatal(err)
		}
		r, err := ws.CreateRole(ctx, identity.NewRole{Name: role})
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.AssignGroupRole(ctx, g.ID, r.ID); err != nil {
			b.Fatal(err)
		}
	}
	carry(benchBigGroup, benchBigRole)
	for t := range benchTeams {
		carry(fmt.Sprintf("team-%d", t), fmt.Sprintf("team-role-%d", t))
	}
}

// benchCount returns how many of the users 1..n have i mod m == r.
func benchCount(n, m, r int) int {
	c := n / m
	if r != 0 && n%m >= r {
		c++
	}
	return c
}

// openBenchDB returns the database of n users, building it on first use
// (or reusing the file -bench.dir keeps): each user has three attributes,
// and the workspace has five mappers.
func openBenchDB(b *testing.B, n int) *benchDB {
	benchMu.Lock()
	defer benchMu.Unlock()
	if db, ok := benchDBs[n]; ok {
		return db
	}
	name := fmt.Sprintf("users-v3-%d.db", n)
	if *benchStore == "bolt" && *benchKeep != "" {
		path := filepath.Join(*benchKeep, name)
		if _, err := os.Stat(path); err == nil {
			db := reopenBenchDB(b, path, n)
			benchDBs[n] = db
			return db
		}
		db := buildBenchDB(b, name+".partial", n)
		db.svc.Close()
		if err := os.Rename(filepath.Join(*benchKeep, name+".partial"), path); err != nil {
			b.Fatal(err)
		}
		db = reopenBenchDB(b, path, n)
		benchDBs[n] = db
		return db
	}
	db := buildBenchDB(b, name, n)
	benchDBs[n] = db
	return db
}

// reopenBenchDB opens a database of n users that an earlier run built and
// reports its size on disk.
func reopenBenchDB(b *testing.B, path string, n int) *benchDB {
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("reusing %s: %d users, %.0f MiB on disk", path, n, float64(info.Size())/(1<<20))
	svc, err := identity.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := svc.GetWorkspace(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return &benchDB{svc: svc, ws: ws, n: n}
}

// buildBenchDB builds the database of n users under name.
func buildBenchDB(b *testing.B, name string, n int) *benchDB {
	b.Logf("building a %s database of %d users", *benchStore, n)
	ctx := context.Background()
	svc := openBenchService(b, name)
	ws, err := svc.CreateWorkspace(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	buildBenchAccess(b, ws)
	batch := make([]identity.ImportedUser, 0, identity.MaxImportBatch)
	for i := 1; i <= n; i++ {
		batch = append(batch, benchUser(i))
		if len(batch) == cap(batch) || i == n {
			if _, err := ws.ImportUsers(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for i, key := range []string{"department", "tier", "employee_id", "absent1", "absent2"}[:benchMappers] {
		id := i%2 == 0
		if _, err := ws.SetClaimMapper(ctx, key, identity.ClaimMapperSpec{ClaimName: "c_" + key, IncludeInID: &id}); err != nil {
			b.Fatal(err)
		}
	}
	return &benchDB{svc: svc, ws: ws, n: n}
}

// benchHash is the hash every benchmark user shares: an argon2id PHC
// string at the default parameters, as a migration would bring in.
const benchHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// freshBenchWorkspace returns workspace "bench" of a new, empty database
// of the -bench.store kind that is closed when b ends.
func freshBenchWorkspace(b *testing.B) *identity.Workspace {
	b.Helper()
	target := filepath.Join(b.TempDir(), "bench.db")
	if *benchStore == "postgres" {
		target = pgtest.URL(b)
	}
	svc, err := openBenchTarget(target)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(context.Background(), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}

// runPerSize runs fn as a sub-benchmark for every database size.
func runPerSize(b *testing.B, fn func(b *testing.B, db *benchDB)) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("users=%d", n), func(b *testing.B) {
			fn(b, openBenchDB(b, n))
		})
	}
}

func BenchmarkGetUser(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		i := int64(0)
		for b.Loop() {
			i = i*7919%int64(db.n) + 1
			if _, err := db.ws.GetUser(ctx, i); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAttributes(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		i := int64(0)
		for b.Loop() {
			i = i*7919%int64(db.n) + 1
			if attrs, err := db.ws.ListAttributes(ctx, i); err != nil || len(attrs) != 3 {
				b.Fatal(attrs, err)
			}
		}
	})
}

func BenchmarkClaims(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		i := int64(0)
		for b.Loop() {
			i = i*7919%int64(db.n) + 1
			if claims, err := db.ws.GetClaims(ctx, i, identity.AccessToken); err != nil || len(claims) != 3 {
				b.Fatal(claims, err)
			}
		}
	})
}

// BenchmarkListUsersSearch pages through a prefix that matches 10 users at
// every size -bench.users allows ("user000012" matches user0000120 to
// user0000129, which every database of at least 1,000 users holds), in
// another case than the usernames.
func BenchmarkListUsersSearch(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		for b.Loop() {
			list, err := db.ws.ListUsers(ctx, "USER000012", &identity.Page{Limit: 20})
			if err != nil || list.Total != 10 {
				b.Fatal(list.Total, err)
			}
		}
	})
}

// BenchmarkListUsersDeepOffset reads a page of 20 at 90% of the list
// (offset 900,000 of 1,000,000).
func BenchmarkListUsersDeepOffset(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		offset := db.n / 10 * 9
		for b.Loop() {
			list, err := db.ws.ListUsers(ctx, "", &identity.Page{Offset: offset, Limit: 20})
			if err != nil || len(list.Items) != 20 || list.Items[0].ID != int64(offset+1) {
				b.Fatal(len(list.Items), err)
			}
		}
	})
}

// BenchmarkSetAttribute compares one writer with eight concurrent writers
// on a fresh database; every write is a durable (fsynced) commit, and
// concurrent writers share commits through the store's group commit.
func BenchmarkSetAttribute(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			ctx := context.Background()
			ws := freshBenchWorkspace(b)
			const users = 1000
			batch := make([]identity.ImportedUser, users)
			for i := range batch {
				batch[i] = identity.ImportedUser{Username: benchUsername(i), Email: benchUsername(i) + "@example.com", FullName: "P"}
			}
			if _, err := ws.ImportUsers(ctx, batch); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						if _, err := ws.SetAttribute(ctx, i%users+1, "counter", strconv.FormatInt(i, 10), nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// BenchmarkImportUsers measures bulk loading in batches of 10,000 users
// with precomputed hashes into a fresh database.
func BenchmarkImportUsers(b *testing.B) {
	ctx := context.Background()
	ws := freshBenchWorkspace(b)
	hash := benchHash
	next := 0
	for b.Loop() {
		batch := make([]identity.ImportedUser, identity.MaxImportBatch)
		for i := range batch {
			next++
			name := benchUsername(next)
			batch[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "Person", PasswordHash: hash}
		}
		if _, err := ws.ImportUsers(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*identity.MaxImportBatch)/b.Elapsed().Seconds(), "users/s")
}

// BenchmarkCreateUser shows the cost of one user created with a password:
// dominated by argon2id at the default (OWASP) parameters, by design.
func BenchmarkCreateUser(b *testing.B) {
	ctx := context.Background()
	ws := freshBenchWorkspace(b)
	i := 0
	for b.Loop() {
		i++
		name := benchUsername(i)
		if _, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: "P", Password: "correct horse battery"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListUsersSearchBroad pages through a prefix that matches many
// users ("user00": all of 10,000, or 99,999 of 1,000,000). Search cost is
// proportional to the number of matches, since total counts them all.
func BenchmarkListUsersSearchBroad(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		want := min(db.n, 99999)
		for b.Loop() {
			list, err := db.ws.ListUsers(ctx, "user00", &identity.Page{Limit: 20})
			if err != nil || list.Total != want {
				b.Fatal(list.Total, err)
			}
		}
	})
}

// openBenchTarget opens a bbolt file, or a PostgreSQL database when target
// is a URL (-bench.store postgres).
func openBenchTarget(target string) (*identity.Service, error) {
	if *benchStore != "postgres" {
		return identity.Open(target, nil)
	}
	st, err := pgstore.Open(context.Background(), target, nil)
	if err != nil {
		return nil, err
	}
	return identity.New(st, nil)
}

// BenchmarkSearchPrefixes reads the first page of 20 of searches by
// prefixes of one, two and three characters (whose totals come from the
// counts the store keeps), a longer one, and an exact username, and checks
// each total: "u" matches every user, "k", "ka" and "kar" every Kara (a
// 26th), "kara.diaz" the Kara Diazes' emails (a 260th).
func BenchmarkSearchPrefixes(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		karas := benchCount(db.n, 26, 10)
		karaDiazes := 0
		for i := 10; i <= db.n; i += 26 {
			if i/26%10 == 2 {
				karaDiazes++
			}
		}
		for _, c := range []struct {
			name, prefix string
			total        int
		}{
			{"1char", "u", db.n},
			{"1char-rare", "k", karas},
			{"2chars", "ka", karas},
			{"3chars", "kar", karas},
			{"9chars", "kara.diaz", karaDiazes},
			{"exact", benchUsername(db.n / 2), 1},
		} {
			b.Run(c.name, func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					list, err := db.ws.ListUsers(ctx, c.prefix, &identity.Page{Limit: 20})
					if err != nil || list.Total != c.total || len(list.Items) != min(20, c.total) {
						b.Fatal(list.Total, len(list.Items), err)
					}
				}
			})
		}
	})
}

// BenchmarkSearchDeepOffset reads a page of 20 at 90% of a one-letter
// search's matches: "u" (every user) and "k" (every Kara, ids 26j+10).
func BenchmarkSearchDeepOffset(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		karas := benchCount(db.n, 26, 10)
		for _, c := range []struct {
			name, prefix string
			offset       int
			first        int64
		}{
			{"u", "u", db.n / 10 * 9, int64(db.n/10*9 + 1)},
			{"k", "k", karas / 10 * 9, int64(karas/10*9*26 + 10)},
		} {
			b.Run(c.name, func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					list, err := db.ws.ListUsers(ctx, c.prefix, &identity.Page{Offset: c.offset, Limit: 20})
					if err != nil || len(list.Items) != 20 || list.Items[0].ID != c.first {
						b.Fatal(len(list.Items), err)
					}
				}
			})
		}
	})
}

// BenchmarkFindUsers looks users up by attribute value: a value a 50th of
// the users share (department dept7), first page of 20 and at 90% of its
// matches, and a value one user has (employee_id).
func BenchmarkFindUsers(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		dept7 := benchCount(db.n, 50, 7)
		for _, c := range []struct {
			name, key, value string
			offset, total    int
			first            int64
		}{
			{"shared", "department", "dept7", 0, dept7, 7},
			{"shared-deep", "department", "dept7", dept7 / 10 * 9, dept7, int64(dept7/10*9*50 + 7)},
			{"unique", "employee_id", strconv.Itoa(db.n / 2), 0, 1, int64(db.n / 2)},
		} {
			b.Run(c.name, func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					list, err := db.ws.ListUsersByAttribute(ctx, c.key, c.value, &identity.Page{Offset: c.offset, Limit: 20})
					if err != nil || list.Total != c.total || len(list.Items) == 0 || list.Items[0].ID != c.first {
						b.Fatal(list.Total, len(list.Items), err)
					}
				}
			})
		}
	})
}
