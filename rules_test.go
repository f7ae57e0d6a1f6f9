package identity_test

import (
	"testing"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// TestRules runs the domain rules of package identitytest over memstore,
// so that the identity package's own tests check every rule; each store
// runs them over itself too.
func TestRules(t *testing.T) {
	identitytest.RunRules(t, func(t *testing.T) store.Store {
		s := memstore.New()
		t.Cleanup(func() { s.Close() })
		return s
	})
}
