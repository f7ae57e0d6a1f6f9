package pgstore_test

import (
	"context"
	"encoding/hex"
	"regexp"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
	"github.com/identitylib/identity/store/storetest"
)

// newConformanceStore opens a store on a schema of its own. With -v it
// logs how often a store that saw contention retried.
func newConformanceStore(t *testing.T) store.Store {
	s := pgtest.Open(t, nil)
	t.Cleanup(func() {
		if st := s.Stats(); st.Retries > 0 {
			t.Logf("pgstore: %d commits, %d retries, %d gave up, at most %d attempts for one Update",
				st.Commits, st.Retries, st.GaveUp, st.MostAttempts)
		}
	})
	return s
}

// TestConformance runs the store contract.
func TestConformance(t *testing.T) { storetest.Run(t, newConformanceStore) }

// TestRules runs the identity package's rules over the store.
func TestRules(t *testing.T) { identitytest.RunRules(t, newConformanceStore) }

// schemaURLs maps each store of TestErasure to the URL of its schema, for
// dumpSchema.
var schemaURLs sync.Map // *pgstore.Store -> string

// newErasureStore opens a store on a schema of its own and remembers the
// schema's URL.
func newErasureStore(t *testing.T) store.Store {
	u := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("pgstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	schemaURLs.Store(s, u)
	return s
}

// TestErasure checks that permanent deletion leaves no row, and nothing
// in any row, of what it deletes.
func TestErasure(t *testing.T) {
	identitytest.RunErasure(t, newErasureStore, identitytest.Erasure{Dump: dumpSchema, HoldsID: holdsID})
}

// byteaHex finds the bytea values in row_to_json's text: "\\x" and hex.
var byteaHex = regexp.MustCompile(`\\\\x([0-9a-f]*)`)

// dumpSchema returns every row of every table of the store's schema, as
// row_to_json writes it, followed by the bytes of its bytea values.
func dumpSchema(tb testing.TB, st store.Store) []identitytest.Record {
	tb.Helper()
	u, ok := schemaURLs.Load(st)
	if !ok {
		tb.Fatal("dump: a store newErasureStore did not open")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.(string))
	if err != nil {
		tb.Fatalf("dump: %v", err)
	}
	defer conn.Close(ctx)
	tables, err := pgx.CollectRows(must(conn.Query(ctx, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)), pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		tb.Fatalf("dump: tables %v, %v", tables, err)
	}
	var out []identitytest.Record
	for _, table := range tables {
		rows, err := pgx.CollectRows(must(conn.Query(ctx, "SELECT row_to_json(t)::text FROM "+pgx.Identifier{table}.Sanitize()+" t")),
			pgx.RowTo[string])
		if err != nil {
			tb.Fatalf("dump %s: %v", table, err)
		}
		for _, row := range rows {
			data := []byte(row)
			for _, m := range byteaHex.FindAllStringSubmatch(row, -1) {
				if b, err := hex.DecodeString(m[1]); err == nil {
					data = append(append(data, ' '), b...)
				}
			}
			out = append(out, identitytest.Record{Where: table, Data: data})
		}
	}
	return out
}

// holdsID reports whether data, a row, names the user id in a user_id
// column.
func holdsID(data []byte, id int64) bool {
	return identitytest.HoldsJSONNumber(data, "user_id", id)
}
