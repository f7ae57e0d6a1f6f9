package memstore_test

import (
	"testing"

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
