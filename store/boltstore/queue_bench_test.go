package boltstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
)

// BenchmarkQueueWrites measures what the queue's writes cost a bbolt
// file, one durable commit each, on a file whose two workspaces have
// 10,000 pending jobs each: an enqueue (a new pending webhook job) and a
// job's status changing as a dispatcher changes it (leased, then
// succeeded). On Linux, KiB/op and pages/op are the bytes the process
// passed to write calls per commit (bbolt writes every page a commit
// dirtied, 4 KiB each, and its meta page), which do not depend on the
// machine's load:
//
//	go test -run '^$' -bench QueueWrites -benchtime 2000x -count 3 ./store/boltstore/
func BenchmarkQueueWrites(b *testing.B) {
	const other, queued = "globex", 10_000
	s := openStore(b, filepath.Join(b.TempDir(), "db"), nil)
	job := func(id int64, due time.Duration) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobWebhook, EndpointID: 1, EventID: fmt.Sprintf("evt_%d", id), EventType: "user.created",
			Payload:   []byte(fmt.Sprintf(`{"type":"user.created","timestamp":"2024-05-06T07:08:09Z","data":{"id":%d}}`, id)),
			CreatedAt: testTime, Status: store.DeliveryPending, NextAttemptAt: testTime.Add(due)}
	}
	for _, slug := range []string{testSlug, other} {
		mustUpdate(b, s, func(tx store.Tx) error {
			if err := tx.PutWorkspace(store.Workspace{Slug: slug, CreatedAt: testTime}); err != nil {
				return err
			}
			if err := tx.PutWebhook(slug, store.Webhook{ID: 1, URL: "https://hooks.example.com/", Events: []string{"user.created"}, Enabled: true, CreatedAt: testTime}); err != nil {
				return err
			}
			for id := int64(1); id <= queued; id++ {
				if err := tx.PutDelivery(slug, job(id, time.Duration(id)*time.Second)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	next := int64(queued)
	measure := func(b *testing.B, op func(id int64)) {
		var bytes int64
		n := 0
		for b.Loop() {
			next++
			w0 := written()
			op(next)
			bytes += written() - w0
			n++
		}
		if bytes > 0 {
			b.ReportMetric(float64(bytes)/1024/float64(n), "KiB/op")
			b.ReportMetric(float64(bytes)/4096/float64(n), "pages/op")
		}
	}
	b.Run("op=Enqueue", func(b *testing.B) {
		measure(b, func(id int64) {
			mustUpdate(b, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, job(id, time.Duration(id)*time.Second)) })
		})
	})
	b.Run("op=LeaseThenSucceed", func(b *testing.B) {
		// Each op is two commits, on a job enqueued before the timing.
		first := next + 1
		mustUpdate(b, s, func(tx store.Tx) error {
			for id := first; id < first+int64(b.N); id++ {
				if err := tx.PutDelivery(testSlug, job(id, time.Duration(id)*time.Second)); err != nil {
					return err
				}
			}
			return nil
		})
		next = first - 1
		measure(b, func(id int64) {
			d := job(id, time.Duration(id)*time.Second)
			d.LeaseUntil, d.LeaseOwner = testTime.Add(time.Duration(id+60)*time.Second), "bench"
			mustUpdate(b, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, d) })
			d.Status, d.Attempts, d.LastStatus, d.LastAttemptAt, d.LeaseUntil, d.LeaseOwner = store.DeliverySucceeded, 1, 204, testTime, time.Time{}, ""
			mustUpdate(b, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, d) })
		})
	})
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
