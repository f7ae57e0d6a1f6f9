package pgstore_test

import (
	"testing"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore/pgtest"
	"github.com/identitylib/identity/store/storetest"
)

// TestConformance runs the shared conformance suite, each store on a
// schema of its own. With -v it logs how often the stores that saw
// contention retried.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := pgtest.Open(t, nil)
		t.Cleanup(func() {
			if st := s.Stats(); st.Retries > 0 {
				t.Logf("pgstore: %d commits, %d retries, %d gave up, at most %d attempts for one Update",
					st.Commits, st.Retries, st.GaveUp, st.MostAttempts)
			}
		})
		return s
	})
}
