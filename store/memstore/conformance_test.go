package memstore_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/store/storetest"
)

// newStore returns an empty store that the test closes when it ends.
func newStore(t *testing.T) store.Store {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the store contract.
func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

// TestRules runs the identity package's rules over the store.
func TestRules(t *testing.T) { identitytest.RunRules(t, newStore) }

// TestErasure checks that permanent deletion leaves nothing of what it
// deletes in the store's maps.
func TestErasure(t *testing.T) {
	identitytest.RunErasure(t, newStore, identitytest.Erasure{Dump: dumpMaps, HoldsID: holdsID})
}

// dumpMaps returns what the store holds, read by reflection inside a View
// (which holds the store's lock): one record per entry of each map, of
// the store and of each workspace's namespace, and one per other field,
// each written "field[key]: value" with every struct's field names.
func dumpMaps(tb testing.TB, st store.Store) []identitytest.Record {
	tb.Helper()
	var out []identitytest.Record
	var fields func(prefix string, v reflect.Value)
	fields = func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			name, f := v.Type().Field(i).Name, v.Field(i)
			if f.Kind() != reflect.Map {
				out = append(out, identitytest.Record{Where: prefix + name, Data: []byte(name + ": " + render(f))})
				continue
			}
			for _, k := range sortedKeys(f) {
				e := f.MapIndex(k)
				if e.Kind() == reflect.Pointer && e.Elem().Type().Name() == "namespace" {
					// A workspace: its slug, then its own fields.
					out = append(out, identitytest.Record{Where: prefix + name, Data: []byte(name + "[" + render(k) + "]")})
					fields(prefix+name+"["+render(k)+"].", e.Elem())
					continue
				}
				entry := name + "[" + render(k) + "]: " + render(e)
				out = append(out, identitytest.Record{Where: prefix + name, Data: []byte(entry)})
			}
		}
	}
	err := st.View(context.Background(), func(store.Tx) error {
		fields("", reflect.ValueOf(st).Elem())
		return nil
	})
	if err != nil {
		tb.Fatalf("dump: %v", err)
	}
	return out
}

// render writes v with the field names of its structs, pointers followed,
// map keys sorted, byte slices as they are. It reads unexported fields
// without calling their methods; times and locks render as their type.
func render(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return render(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() || v.Type().PkgPath() == "sync" {
			return v.Type().String()
		}
		parts := make([]string, v.NumField())
		for i := range v.NumField() {
			parts[i] = v.Type().Field(i).Name + ":" + render(v.Field(i))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case reflect.Map:
		var parts []string
		for _, k := range sortedKeys(v) {
			parts = append(parts, render(k)+":"+render(v.MapIndex(k)))
		}
		return "map[" + strings.Join(parts, " ") + "]"
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			return string(v.Bytes())
		}
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = render(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	default:
		return fmt.Sprintf("<%s>", v.Kind())
	}
}

// sortedKeys returns the keys of the map m, sorted by their rendering.
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(render(a), render(b)) })
	return keys
}

// userKeyed are the namespace's maps keyed by user id.
var userKeyed = regexp.MustCompile(`^(users|roles|attrs|byUser|grantsByUser|mailOf|loginAttempts|secondFactors|userGroups)\[`)

// holdsID reports whether data, one record of dumpMaps, holds the user
// id: as the key of a map keyed by user id, in the ascending list of user
// ids, or as a UserID field.
func holdsID(data []byte, id int64) bool {
	n := strconv.FormatInt(id, 10)
	s := string(data)
	if userKeyed.MatchString(s) && strings.HasPrefix(s[strings.IndexByte(s, '[')+1:], n+"]") {
		return true
	}
	if rest, ok := strings.CutPrefix(s, "userIDs: ["); ok && slices.Contains(strings.Fields(strings.TrimSuffix(rest, "]")), n) {
		return true
	}
	// A group's members: "members[group]: [ids]".
	if _, list, ok := strings.Cut(s, "]: ["); ok && strings.HasPrefix(s, "members[") &&
		slices.Contains(strings.Fields(strings.TrimSuffix(list, "]")), n) {
		return true
	}
	return regexp.MustCompile(`\bUserID:` + n + `\b`).MatchString(s)
}
