// Command genaudit writes a bbolt file with the release whose audit trail
// kept a bucket per index (commit 19fa0f6): workspace acme with five
// audit records, then compacts it.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

func main() {
	path := os.Args[1]
	s, err := boltstore.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	at := func(sec int) time.Time { return time.Date(2026, 5, 6, 7, 8, sec, 0, time.UTC) }
	records := []store.AuditRecord{
		{ID: "000650a4b7d2a2c0a1f3c5d7e9b2d4f6", Time: at(1),
			ActorKind: "api_key", ActorID: "k_deploy", ActorDisplay: "deploy key",
			Action: "user.created", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
			Outcome: "success", Address: "192.0.2.1", UserAgent: "curl/8.0", RequestID: "req-1",
			Changes: []byte(`{"username":{"after":"ada"}}`)},
		{ID: "000650a4b7e1e500b3d5f7a9c1e3a5c7", Time: at(2),
			ActorKind: "system", Action: "sign_in.failed", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
			Outcome: "failure", Reason: "wrong_password", Address: "198.51.100.7", UserAgent: "Mozilla/5.0"},
		{ID: "000650a4b7f12740c5e7a9b1d3f5b7d9", Time: at(3),
			ActorKind: "user", ActorID: "1", ActorDisplay: "ada",
			Action: "sign_in.succeeded", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
			Outcome: "success", Address: "198.51.100.7", UserAgent: "Mozilla/5.0"},
		{ID: "000650a4b8006980d7f9b1c3e5a7c9eb", Time: at(4),
			ActorKind: "api_key", ActorID: "k_deploy", ActorDisplay: "deploy key",
			Action: "user.attribute_set", TargetKind: "user", TargetID: "2", TargetDisplay: "bob",
			Outcome: "success", RequestID: "req-2",
			Changes: []byte(`{"attributes.department":{"after":"R&D"}}`)},
		{ID: "000650a4b80fabc0e9b1c3d5f7b9d1fd", Time: at(5),
			ActorKind: "system", Action: "sign_in.failed", TargetKind: "user", TargetDisplay: "mallory",
			Outcome: "failure", Reason: "unknown_login", Address: "203.0.113.9"},
	}
	err = s.Update(context.Background(), func(tx store.Tx) error {
		errs := []error{tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: at(0)})}
		for _, r := range records {
			errs = append(errs, tx.PutAuditRecord("acme", r))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	res, err := boltstore.Compact(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d records; compacted: %d -> %d bytes\n", len(records), res.Before, res.After)
}
