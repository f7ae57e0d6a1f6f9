package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/storetest"
)

// TestConformance runs the shared store conformance suite on a fresh file
// per test.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openStore(t, filepath.Join(t.TempDir(), "db"), nil)
	})
}
