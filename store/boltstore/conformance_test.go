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
// values (which encoding/json writes in base64) decoded, and the ids of
// roles and groups in the keys and values of the buckets idFields lists
// written out as text.
func dumpFile(tb testing.TB, st store.Store) []identitytest.Record {
	tb.Helper()
	var out []identitytest.Record
	var walk func(path string, depth int, fields idLayout, b *bbolt.Bucket) error
	walk = func(path string, depth int, fields idLayout, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			where := path + "/" + strconv.Quote(string(k))
			if nested := b.Bucket(k); nested != nil && v == nil {
				out = append(out, identitytest.Record{Where: where + " (bucket)", Data: bytes.Clone(k)})
				var inner idLayout
				if depth == 2 { // a bucket of a workspace: ws/slug/name
					inner = idFields[string(k)]
				}
				return walk(where, depth+1, inner, nested)
			}
			data := append(append(renderIDs(k, fields.key), ' '), renderIDs(v, fields.value)...)
			out = append(out, identitytest.Record{Where: where, Data: append(data, decodeJSONBytes(v)...)})
			return nil
		})
	}
	err := boltstore.DB(st.(*boltstore.Store)).View(func(btx *bbolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			out = append(out, identitytest.Record{Where: string(name) + " (bucket)", Data: bytes.Clone(name)})
			return walk(string(name), 1, idLayout{}, b)
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

// idLayout says what each 8-byte id of a key and of a value is: 'u' a
// user's, 'r' a role's, 'g' a group's; empty for bytes dumped as they are.
type idLayout struct{ key, value string }

// idFields are the layouts of the buckets of a workspace that hold ids of
// roles or groups, next to users' or alone. Their keys are ids like a
// user's, so a role or group with the id of a deleted user would read as
// the user's: renderIDs writes them out as text, and holdsID sees only
// the users' ids.
var idFields = map[string]idLayout{
	"user_roles":          {key: "ur"},
	"roles":               {key: "r"},
	"role_names":          {value: "r"},
	"groups":              {key: "g"},
	"group_names":         {value: "g"},
	"group_members":       {key: "gu"},
	"user_groups":         {key: "ug"},
	"group_roles":         {key: "gr"},
	"role_groups":         {key: "rg"},
	"role_holders":        {key: "ru"},
	"role_holder_counts":  {key: "r"},
	"group_member_counts": {key: "g"},
}

// renderIDs returns b with its ids of roles and groups, as layout names
// them, written "role:N" and "group:N", and its users' ids as they are.
// Bytes that do not have the layout's length are returned as they are,
// so that nothing is hidden from the search.
func renderIDs(b []byte, layout string) []byte {
	if layout == "" || len(b) != 8*len(layout) {
		return bytes.Clone(b)
	}
	var out []byte
	for i, kind := range []byte(layout) {
		field := b[8*i : 8*i+8]
		id := int64(binary.BigEndian.Uint64(field) ^ 1<<63)
		switch kind {
		case 'r':
			out = append(out, "role:"+strconv.FormatInt(id, 10)...)
		case 'g':
			out = append(out, "group:"+strconv.FormatInt(id, 10)...)
		default:
			out = append(out, field...)
		}
	}
	return out
}

// holdsID reports whether data holds the user id as the file writes it:
// an 8-byte id key (big-endian, top bit flipped), or "user_id" in a JSON
// record. (dumpFile writes the ids of roles and groups as text.)
func holdsID(data []byte, id int64) bool {
	key := binary.BigEndian.AppendUint64(nil, uint64(id)^1<<63)
	return bytes.Contains(data, key) || identitytest.HoldsJSONNumber(data, "user_id", id)
}
