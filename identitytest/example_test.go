package identitytest_test

import (
	"testing"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// A Store implementation shows that the identity package's rules hold
// over it with one test in its own package, beside storetest.Run; this is
// memstore's. (The example shows the test; it has no output of its own
// to check.)
func ExampleRunRules() {
	rules := func(t *testing.T) {
		identitytest.RunRules(t, func(t *testing.T) store.Store {
			s := memstore.New()
			t.Cleanup(func() { s.Close() })
			return s
		})
	}
	_ = rules // in the store's package: func TestRules(t *testing.T)
}
