package store

// Exclusive is implemented by a Store that can tell whether it alone
// changes its data while it is open. A caller that keeps records in
// memory across transactions (the identity package's cache of verified
// API keys) needs to know that nothing it did not write itself can make
// them stale.
//
// A Store need not implement it, and a caller treats a Store that does
// not as shared: a PostgreSQL database (package pgstore) may be changed by
// any number of processes at once, so pgstore does not implement it.
// boltstore does, with true: a bbolt file is locked by the one Store that
// opened it, and Open of another Store, in this process or another, waits
// for the lock and fails.
type Exclusive interface {
	// Exclusive reports whether, from Open until Close, every change to
	// the store's data comes through this Store object: no other process
	// and no other Store object writes it. Changes made through this Store
	// object by callers other than the one asking are not excluded; a
	// program that shares one Store object among several users of it
	// knows that without asking. The answer does not change while the
	// Store is open.
	Exclusive() bool
}
