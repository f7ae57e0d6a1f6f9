package pgstore_test

import (
	"testing"

	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
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
