//go:build linux

package boltstore_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

var (
	benchAudit    = flag.String("boltstore.audit", "", "comma-separated sizes of the audit trail of BenchmarkAuditPage; none skips it")
	benchAuditDir = flag.String("boltstore.auditdir", filepath.Join(os.TempDir(), "identity-bench-audit"),
		"the directory that keeps the files of BenchmarkAuditPage between runs")
)

// BenchmarkAuditPage reads a page of 50 records, newest first, from a
// workspace's audit trail of -boltstore.audit records, filtered by each
// index and unfiltered, warm (the file in the page cache) and cold (the
// file dropped from the page cache before every read: EvictFile):
//
//	go test -run '^$' -bench AuditPage -benchtime 2s ./store/boltstore/ \
//	    -args -boltstore.audit=1000000,10000000 -boltstore.auditdir /var/tmp/identity-bench-audit
//
// A file is built once per size, with BulkLoadAudit, to
// audit-v2-N.db.partial in -boltstore.auditdir, renamed when complete,
// and reused by every later run (v2: the indexes in audit_index; a v1
// file, a bucket per index, is not reused). The trail is a year of a workspace of
// 100,000 users (auditBenchRecord): sign-ins, tokens, a few
// administrative changes by five API keys and rare revocations by an
// operator. Cold reads report pages/op, the pages of the file a read
// brought back into the page cache; both report cpu-ns/op, the CPU time
// of the process per read, which other work on the machine does not
// stretch as it stretches ns/op.
func BenchmarkAuditPage(b *testing.B) {
	if *benchAudit == "" {
		b.Skip("set -boltstore.audit to the sizes of the trail (see the benchmark's documentation)")
	}
	for _, field := range strings.Split(*benchAudit, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1000 {
			b.Fatalf("-boltstore.audit: %q is not a size of at least 1000", field)
		}
		b.Run(fmt.Sprint("records=", n), func(b *testing.B) { benchAuditPage(b, n) })
	}
}

// The workspace of the trail: auditBenchUsers users, each signing in,
// getting tokens and refreshing them through one of auditBenchClients
// clients, administered through auditBenchKeys API keys.
const (
	auditBenchUsers   = 100_000
	auditBenchClients = 10
	auditBenchKeys    = 5
	auditBenchRoles   = 50
	// auditBenchEvery is the time between two records: 10,000,000 of them
	// make a year.
	auditBenchEvery = 3 * time.Second
)

// auditBenchStart is the time of the first record.
var auditBenchStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// splitmix64 is a fixed pseudo-random function: the record of an index
// is always the same.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// auditBenchRecord returns record i of the trail, written at
// auditBenchStart + i*auditBenchEvery, its action drawn per mille:
//
//	400  sign_in.succeeded              the user, on themselves
//	150  token.issued                   a client, target the user
//	150  token.refreshed                a client, target the user
//	 50  sign_in.failed (failure)       the system, target the user
//	 50  session.revoked                the user
//	 50  user.updated                   an API key, target the user
//	 30  user.attribute.set             an API key
//	 20  password.changed               the user; 1 in 10 a failure
//	 20  user.role.assigned             an API key
//	 20  group.member.added             an API key
//	 20  user.created                   an API key
//	 10  client.authentication_failed   a client, on itself (failure)
//	 10  token.refresh_reused           a client, target the user (failure)
//	 10  role.updated                   an API key, target a role
//	  9  settings.changed               an API key, target the workspace
//	  1  api_key.revoked                the operator, target an API key
//
// The user is one of auditBenchUsers, drawn uniformly.
func auditBenchRecord(i int) store.AuditRecord {
	h := splitmix64(uint64(i))
	at := auditBenchStart.Add(time.Duration(i) * auditBenchEvery)
	userID := strconv.FormatUint(h>>20%auditBenchUsers+1, 10)
	user := party{"user", userID, "user" + userID}
	client := fmt.Sprintf("app-%d", h>>40%auditBenchClients)
	key := fmt.Sprintf("key-%d", h>>44%auditBenchKeys+1)
	var (
		actor, target   party
		action, outcome = "", "success"
		reason          string
		changes         []byte
	)
	switch mille := h % 1000; {
	case mille < 400:
		actor, target, action = user, user, "sign_in.succeeded"
		changes = []byte(`{"method":{"after":"password"},"clientId":{"after":"` + client + `"}}`)
	case mille < 550:
		actor, target, action = party{"client", client, client}, user, "token.issued"
		changes = []byte(fmt.Sprintf(`{"clientId":{"after":%q},"grantId":{"after":"gr-%016x"},"scope":{"after":"openid profile"}}`, client, h))
	case mille < 700:
		actor, target, action = party{"client", client, client}, user, "token.refreshed"
		changes = []byte(fmt.Sprintf(`{"clientId":{"after":%q},"grantId":{"after":"gr-%016x"}}`, client, h))
	case mille < 750:
		actor, target, action, outcome, reason = party{"system", "", ""}, user, "sign_in.failed", "failure", "wrong_password"
	case mille < 800:
		actor, target, action, reason = user, user, "session.revoked", "logout"
		changes = []byte(fmt.Sprintf(`{"sessionId":{"before":"se-%016x"}}`, h))
	case mille < 850:
		actor, target, action = party{"api_key", key, key}, user, "user.updated"
		changes = []byte(`{"fullName":{"before":"Ada","after":"Ada Lovelace"}}`)
	case mille < 880:
		actor, target, action = party{"api_key", key, key}, user, "user.attribute.set"
		changes = []byte(`{"attributes.department":{"before":"dept7","after":"dept8"}}`)
	case mille < 900:
		actor, target, action = user, user, "password.changed"
		if h>>50%10 == 0 {
			outcome, reason = "failure", "wrong_password"
		}
	case mille < 920:
		actor, target, action = party{"api_key", key, key}, user, "user.role.assigned"
		changes = []byte(`{"role":{"after":"auditor"}}`)
	case mille < 940:
		actor, target, action = party{"api_key", key, key}, user, "group.member.added"
		changes = []byte(`{"group":{"after":"staff"}}`)
	case mille < 960:
		actor, target, action = party{"api_key", key, key}, user, "user.created"
		changes = []byte(`{"username":{"after":"` + user.display + `"},"email":{"after":"` + user.display + `@example.com"}}`)
	case mille < 970:
		actor, action, outcome, reason = party{"client", client, client}, "client.authentication_failed", "failure", "wrong_secret"
		target = actor
	case mille < 980:
		actor, target, action, outcome = party{"client", client, client}, user, "token.refresh_reused", "failure"
	case mille < 990:
		role := strconv.FormatUint(h>>30%auditBenchRoles+1, 10)
		actor, target, action = party{"api_key", key, key}, party{"role", role, "role-" + role}, "role.updated"
		changes = []byte(`{"description":{"before":"","after":"Reads the audit trail"}}`)
	case mille < 999:
		actor, target, action = party{"api_key", key, key}, party{"workspace", "bench", "bench"}, "settings.changed"
		changes = []byte(`{"passwordMinLength":{"before":10,"after":12}}`)
	default:
		actor, target, action = party{"operator", "0", "root"}, party{"api_key", key, key}, "api_key.revoked"
	}
	r := store.AuditRecord{
		ID:   fmt.Sprintf("%016x%016x", at.UnixMicro(), h),
		Time: at,
		// The request of a person: an address and a browser.
		Address:   fmt.Sprintf("198.51.100.%d", h>>8%250),
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
		RequestID: fmt.Sprintf("%016x", h^0x5bd1e995),
		ActorKind: actor.kind, ActorID: actor.id, ActorDisplay: actor.display,
		Action:     action,
		TargetKind: target.kind, TargetID: target.id, TargetDisplay: target.display,
		Outcome: outcome, Reason: reason, Changes: changes,
	}
	if actor.kind != "user" {
		r.UserAgent = "identity-admin/1.0"
	}
	return r
}

// cpuTime returns the CPU time the process has used: a benchmark's
// ns/op is the time of the wall, which a machine busy with other work
// stretches, and cpu-ns/op what the reads cost the CPU themselves
// (garbage collection included).
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// party is an actor or a target: kind, id, display.
type party struct{ kind, id, display string }

// auditBenchFile returns the path of the file of n records, building it
// unless an earlier run did.
func auditBenchFile(b *testing.B, n int) string {
	if err := os.MkdirAll(*benchAuditDir, 0o700); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(*benchAuditDir, fmt.Sprintf("audit-v2-%d.db", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	partial := path + ".partial"
	if err := os.Remove(partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
	s := openStore(b, partial, nil)
	mustUpdate(b, s, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: auditBenchStart})
	})
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := boltstore.BulkLoadAudit(partial, testSlug, n, auditBenchRecord); err != nil {
		b.Fatalf("BulkLoadAudit: %v", err)
	}
	b.Logf("built %s: %d records in %v", path, n, time.Since(start).Round(time.Second))
	if err := os.Rename(partial, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// auditBenchQueries are the pages BenchmarkAuditPage reads.
var auditBenchQueries = []struct {
	name string
	q    store.AuditQuery
}{
	{"unfiltered", store.AuditQuery{}},
	{"target=user", store.AuditQuery{TargetKind: "user", TargetID: "4242"}},
	{"actor=api_key", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1"}},
	{"actor=user", store.AuditQuery{ActorKind: "user", ActorID: "4242"}},
	{"action=sign_in.failed", store.AuditQuery{Actions: []string{"sign_in.failed"}}},
	{"action=api_key.revoked", store.AuditQuery{Actions: []string{"api_key.revoked"}}},
	{"actions=3", store.AuditQuery{Actions: []string{"user.created", "password.changed", "api_key.revoked"}}},
	{"outcome=failure", store.AuditQuery{Outcome: "failure"}},
	{"target=user+outcome=failure", store.AuditQuery{TargetKind: "user", TargetID: "4242", Outcome: "failure"}},
}

func benchAuditPage(b *testing.B, n int) {
	path := auditBenchFile(b, n)
	if info, err := os.Stat(path); err == nil {
		b.Logf("%s: %.0f MiB", path, float64(info.Size())/(1<<20))
	}
	s := openStore(b, path, nil)
	read := func(q store.AuditQuery) (recs []store.AuditRecord) {
		mustView(b, s, func(tx store.Tx) (err error) {
			recs, err = tx.AuditRecords(testSlug, q)
			return err
		})
		return recs
	}
	for _, tc := range auditBenchQueries {
		q := tc.q
		if tc.name != "unfiltered" {
			// The matches, for the log; the unfiltered ones are n.
			q.Limit = n
			b.Logf("%s: %d records", tc.name, len(read(q)))
		}
		q.Limit = 50
		want := len(read(q))
		check := func(b *testing.B, got []store.AuditRecord) {
			if len(got) != want {
				b.Fatalf("%s: %d records, want %d", tc.name, len(got), want)
			}
		}
		b.Run(tc.name+"/warm", func(b *testing.B) {
			cpu := cpuTime(b)
			for b.Loop() {
				check(b, read(q))
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(tc.name+"/cold", func(b *testing.B) {
			pages := 0
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				if err := boltstore.EvictFile(s, path); err != nil {
					b.Fatalf("EvictFile: %v", err)
				}
				before, err := boltstore.ResidentPages(s)
				if err != nil {
					b.Fatal(err)
				}
				start := cpuTime(b)
				b.StartTimer()
				got := read(q)
				b.StopTimer()
				cpu += cpuTime(b) - start
				check(b, got)
				after, err := boltstore.ResidentPages(s)
				if err != nil {
					b.Fatal(err)
				}
				pages += after - before
				b.StartTimer()
			}
			b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
