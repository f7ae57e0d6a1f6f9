package pgstore_test

import (
	"os"
	"testing"

	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestMain lets pgtest start a throwaway PostgreSQL server when the tests
// need one and IDENTITY_TEST_POSTGRES is unset, and stops it at the end.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m.Run)) }
