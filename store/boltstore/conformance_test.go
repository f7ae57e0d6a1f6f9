package boltstore_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/storetest"
)

// newConformanceStore opens a store in a fresh file that the test closes
// when it ends.
func newConformanceStore(t *testing.T) store.Store {
	return openStore(t, filepath.Join(t.TempDir(), "db"), nil)
}

// TestConformance runs the store contract on a fresh file per test.
func TestConformance(t *testing.T) { storetest.Run(t, newConformanceStore) }

// TestRules runs the identity package's rules over the store.
func TestRules(t *testing.T) { identitytest.RunRules(t, newConformanceStore) }

// TestErasure checks that permanent deletion leaves no byte of what it
// deletes in the file.
func TestErasure(t *testing.T) {
	identitytest.RunErasure(t, newConformanceStore, identitytest.Erasure{Dump: dumpFile, HoldsID: holdsID})
}

// dumpFile returns every bucket name, key and value of the store's file,
// walking the buckets recursively, with the byte strings inside JSON
// values (which encoding/json writes in base64) decoded.
func dumpFile(tb testing.TB, st store.Store) []identitytest.Record {
	tb.Helper()
	var out []identitytest.Record
	var walk func(path string, b *bbolt.Bucket) error
	walk = func(path string, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			where := path + "/" + strconv.Quote(string(k))
			if nested := b.Bucket(k); nested != nil && v == nil {
				out = append(out, identitytest.Record{Where: where + " (bucket)", Data: bytes.Clone(k)})
				return walk(where, nested)
			}
			data := append(append(bytes.Clone(k), ' '), v...)
			out = append(out, identitytest.Record{Where: where, Data: append(data, decodeJSONBytes(v)...)})
			return nil
		})
	}
	err := boltstore.DB(st.(*boltstore.Store)).View(func(btx *bbolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			out = append(out, identitytest.Record{Where: string(name) + " (bucket)", Data: bytes.Clone(name)})
			return walk(string(name), b)
		})
	})
	if err != nil {
		tb.Fatalf("dump: %v", err)
	}
	return out
}

// decodeJSONBytes returns, when v is JSON, every string in it that is
// base64, decoded, each after a space.
func decodeJSONBytes(v []byte) []byte {
	var doc any
	if json.Unmarshal(v, &doc) != nil {
		return nil
	}
	var out []byte
	var visit func(x any)
	visit = func(x any) {
		switch x := x.(type) {
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				out = append(append(out, ' '), b...)
			}
		case []any:
			for _, e := range x {
				visit(e)
			}
		case map[string]any:
			for _, e := range x {
				visit(e)
			}
		}
	}
	visit(doc)
	return out
}

// holdsID reports whether data holds the user id as the file writes it:
// an 8-byte id key (big-endian, top bit flipped), or "user_id" in a JSON
// record.
func holdsID(data []byte, id int64) bool {
	key := binary.BigEndian.AppendUint64(nil, uint64(id)^1<<63)
	return bytes.Contains(data, key) || identitytest.HoldsJSONNumber(data, "user_id", id)
}
