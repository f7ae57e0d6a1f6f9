package boltstore

import "go.etcd.io/bbolt"

// CommitStats returns how many read-write transactions the committer has
// begun and the largest group of Update calls it has taken at once.
func CommitStats(s *Store) (transactions, largestGroup int64) {
	return s.stats.transactions.Load(), s.stats.largestGroup.Load()
}

// ErrGoexit is errGoexit, for tests.
var ErrGoexit = errGoexit

// DB returns the store's bbolt database, for tests that read every byte
// of it.
func DB(s *Store) *bbolt.DB { return s.db }
