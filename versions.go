package identity

import (
	"math/rand/v2"
	"slices"
)

// Users, claim mappers and webhook endpoints carry a Version that changes
// on every write of the record: a random positive number, never the one it
// replaces. Random rather than counted, so that a mapper deleted and
// created again never comes back at a version a client saw before. Records
// written before versions existed read as version 0 until their next write.

// newVersion returns a fresh version: positive and different from old.
func newVersion(old int64) int64 {
	for {
		if v := rand.Int64(); v > 0 && v != old {
			return v
		}
	}
}

// Precondition makes a write conditional on the record it would replace,
// for optimistic concurrency: read a record, then write with
// IfVersion(read.Version), and the write happens only if nobody wrote in
// between. It mirrors HTTP's If-Match and If-None-Match. A nil
// *Precondition imposes nothing. A write whose precondition does not hold
// fails with CodePreconditionFailed and changes nothing.
type Precondition struct {
	// Versions, when not empty, requires the record to exist with one of
	// these versions (If-Match with entity tags).
	Versions []int64
	// NotVersions requires the record not to be at any of these versions
	// (If-None-Match with entity tags); a missing record satisfies it.
	NotVersions []int64
	// Exists requires the record to exist, whatever its version: the
	// write may replace, never create (If-Match: *).
	Exists bool
	// Absent requires that no record exists: the write may create, never
	// replace (If-None-Match: *).
	Absent bool
}

// IfVersion returns the precondition that the record exists at version v.
func IfVersion(v int64) *Precondition { return &Precondition{Versions: []int64{v}} }

// check returns a CodePreconditionFailed error, describing the record as
// what, unless the precondition holds for a record that exists (or not)
// at version.
func (p *Precondition) check(exists bool, version int64, what string) error {
	switch {
	case p == nil:
		return nil
	case p.Absent && exists:
		return errorf(CodePreconditionFailed, "%s already exists", what)
	case (p.Exists || len(p.Versions) > 0) && !exists:
		return errorf(CodePreconditionFailed, "%s does not exist", what)
	case len(p.Versions) > 0 && !slices.Contains(p.Versions, version),
		exists && slices.Contains(p.NotVersions, version):
		return errorf(CodePreconditionFailed, "%s is not at the expected version", what)
	}
	return nil
}
