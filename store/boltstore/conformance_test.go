package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
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
