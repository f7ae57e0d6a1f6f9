package identity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/memstore"
)

// The cost of the audit trail on the write path, over bbolt files: the
// same writes with their records stored, and with a store that drops
// every PutAuditRecord (the record is still built, and its transaction
// still commits the change), side by side in one run:
//
//	go test -run '^$' -bench 'AuditWritePath|AuditRecordBuild' -benchtime 3s -count 5 .
//
// Password hashing is cheap here (64 KiB, one pass), so that what is
// measured is the write; at the default parameters a CreateUser or a
// failed sign-in costs 15-30 ms of argon2id, against which the record is
// nothing. A failed sign-in is measured without the refusal floor's
// timer (checkPassword, which Authenticate calls before it waits): the
// floor pads every refusal to the slowest recent one, with or without
// the trail, and would hide the write path.

// auditDroppingStore is a Store whose transactions drop every audit
// record when drop is set: the write path without the trail, for the
// benchmarks. Its transactions are wrapped either way, so that both
// sides pay the same wrapping.
type auditDroppingStore struct {
	store.Store
	drop bool
}

func (s *auditDroppingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(auditDroppingTx{Tx: tx, drop: s.drop}) })
}

type auditDroppingTx struct {
	store.Tx
	drop bool
}

func (tx auditDroppingTx) PutAuditRecord(slug string, r store.AuditRecord) error {
	if tx.drop {
		return nil
	}
	return tx.Tx.PutAuditRecord(slug, r)
}

// auditBenchWorkspace returns workspace "bench" of a new bbolt file,
// with users user1 to user<users> (password "correct horse battery"),
// lockout at its highest threshold and throttling off (so that every
// failed sign-in is a wrong password counted), over an
// auditDroppingStore that drops the records when drop is set.
func auditBenchWorkspace(b *testing.B, drop bool, users int) *Workspace {
	b.Helper()
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "audit.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := New(&auditDroppingStore{Store: st, drop: drop}, &Options{PasswordHashing: &Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	settings := DefaultSettings()
	settings.Lockout = LockoutPolicy{Threshold: MaxLockoutThreshold}
	settings.Throttle = ThrottlePolicy{Disabled: true}
	ctx := context.Background()
	ws, err := svc.CreateWorkspace(ctx, "bench", &settings)
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= users; i++ {
		name := fmt.Sprintf("user%d", i)
		if _, err := ws.CreateUser(ctx, NewUser{Username: name, Email: name + "@example.com", FullName: "P", Password: "correct horse battery"}); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkAuditWritePath: CreateUser, SetAttribute (a new value each
// time, so that every call writes) and a failed sign-in (a wrong
// password: the attempt's reservation, the hash, and the release that
// counts the failure and writes sign_in.failed), each on two bbolt files
// side by side, one keeping the audit records and one dropping them.
// Each iteration makes the write once on each file, in turn, so that
// both see the same disk and the same load, and the time of each is
// reported: the medians with the record (on-p50-µs) and without
// (off-p50-µs), and how much longer the write with its record takes, of
// the medians (extra-p50-%: a commit's fsync on a virtual disk varies by
// milliseconds, which the median leaves out) and of the means
// (extra-mean-%). ns/op is the pair's. On Linux, on-KiB/op and
// off-KiB/op are the bytes the process wrote per write (bbolt writes
// every page a commit dirtied, then syncs the file).
func BenchmarkAuditWritePath(b *testing.B) {
	ctx := context.Background()
	ops := []struct {
		name  string
		users int
		op    func(b *testing.B, ws *Workspace, i int)
	}{
		{"CreateUser", 0, func(b *testing.B, ws *Workspace, i int) {
			name := fmt.Sprintf("new%d", i)
			if _, err := ws.CreateUser(ctx, NewUser{Username: name, Email: name + "@example.com", FullName: "P", Password: "correct horse battery"}); err != nil {
				b.Fatal(err)
			}
		}},
		{"SetAttribute", 1, func(b *testing.B, ws *Workspace, i int) {
			if _, err := ws.SetAttribute(ctx, 1, "department", fmt.Sprintf("dept-%d", i), nil); err != nil {
				b.Fatal(err)
			}
		}},
		{"FailedSignIn", 100, func(b *testing.B, ws *Workspace, i int) {
			// A hundred users, each far from the threshold of 1,000
			// failures for any b.N of a few seconds.
			login := fmt.Sprintf("user%d", i%100+1)
			if _, _, err := ws.checkPassword(ctx, login, "not the password", ws.svc.startRefusalTiming(), ""); ErrorCode(err) != CodeUnauthenticated {
				b.Fatalf("checkPassword: %v, want CodeUnauthenticated", err)
			}
		}},
	}
	for _, op := range ops {
		b.Run("op="+op.name, func(b *testing.B) {
			on, off := auditBenchWorkspace(b, false, op.users), auditBenchWorkspace(b, true, op.users)
			var withRecord, without []time.Duration
			var onBytes, offBytes int64
			i := 0
			for b.Loop() {
				i++
				w0 := written()
				start := time.Now()
				op.op(b, on, i)
				mid := time.Now()
				w1 := written()
				op.op(b, off, i)
				end := time.Now()
				w2 := written()
				withRecord = append(withRecord, mid.Sub(start))
				without = append(without, end.Sub(mid))
				onBytes += w1 - w0
				offBytes += w2 - w1
			}
			if onBytes > 0 {
				b.ReportMetric(float64(onBytes)/1024/float64(i), "on-KiB/op")
				b.ReportMetric(float64(offBytes)/1024/float64(i), "off-KiB/op")
			}
			onMedian, offMedian := median(withRecord), median(without)
			b.ReportMetric(float64(onMedian.Microseconds()), "on-p50-µs")
			b.ReportMetric(float64(offMedian.Microseconds()), "off-p50-µs")
			b.ReportMetric(100*(float64(onMedian)/float64(offMedian)-1), "extra-p50-%")
			b.ReportMetric(100*(float64(sum(withRecord))/float64(sum(without))-1), "extra-mean-%")
		})
	}
}

// BenchmarkAuditRecordBuild is what both sides of BenchmarkAuditWritePath
// pay for a record before the store sees it: the id (random bits), the
// actor and request from the context, and the changes encoded as JSON
// (a SetAttribute's).
func BenchmarkAuditRecordBuild(b *testing.B) {
	st := memstore.New()
	b.Cleanup(func() { st.Close() })
	svc, err := New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := WithActor(context.Background(), Actor{Kind: ActorAPIKey, ID: "k_7Qm2", Display: "provisioning"})
	e := auditEntry{action: AuditUserAttributeSet, target: AuditTarget{Kind: TargetUser, ID: "1", Display: "ada"},
		changes: auditChanges{}.set("attributes.department", "R&D", "Mathematics")}
	for b.Loop() {
		rec, err := svc.auditRecord(ctx, "bench", e)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rec.stored(); err != nil {
			b.Fatal(err)
		}
	}
}

// median returns the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// sum returns the sum of ds.
func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

// written returns the bytes the process has passed to write calls so
// far (wchar of /proc/self/io), or 0 where there is no such file.
func written() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
