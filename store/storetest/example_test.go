package storetest_test

import (
	"testing"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/store/storetest"
)

// A Store implementation proves that it keeps the contract with one test
// in its own package, which runs the whole suite over fresh stores; this
// is memstore's. (The example shows the test; it has no output of its
// own to check.)
func ExampleRun() {
	conformance := func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := memstore.New()
			t.Cleanup(func() { s.Close() })
			return s
		})
	}
	_ = conformance // in the store's package: func TestConformance(t *testing.T)
}
