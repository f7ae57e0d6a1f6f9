// Package boltstore is a store.Store kept in one bbolt file: a durable,
// embedded store that serves a million users per workspace.
//
// # Layout
//
// Integer ids are stored as 8-byte big-endian keys of uint64(id) with the
// top bit flipped, so that byte order equals numeric order for every int64
// (the positive ids the identity package hands out simply gain a set top
// bit). Times are unix microseconds, UTC, and in keys are encoded like ids,
// so that byte order is time order. Folded strings are store.Fold of the
// field. Top-level buckets:
//
//	workspaces               slug -> JSON workspace record
//	apikeys                  key id -> JSON key record (workspace inside)
//	delivery_due             due time + delivery id + slug -> endpoint id,
//	                         one entry per pending delivery of any workspace
//	meta                     "pending_deliveries" -> uint64 number of
//	                         entries in delivery_due
//	idempotency_expiry       expiry time + slug + scope + key -> empty,
//	                         one entry per idempotency record
//	ws                       one nested bucket per workspace slug:
//	  users                  id -> user record (binary, see below)
//	  user_username          folded username -> id
//	  user_email             folded email -> id
//	  user_name              folded full name + id -> empty
//	  user_chunks            chunk -> uint32 number of users in it
//	  user_prefixes          folded prefix -> uint64 number of users with
//	                         a field starting with it (+ byte 1 when its
//	                         children are counted): every prefix of 1-3
//	                         runes, and the children of the expanded
//	                         ones (see prefixes.go)
//	  user_prefix_chunks     first rune + chunk -> uint32 number of the
//	                         chunk's users with a field starting with it
//	  user_roles             user id + role id -> empty
//	  user_attrs             user id + attribute key -> value
//	  mappers                attribute key -> claim mapper record (binary)
//	  webhooks               id -> JSON endpoint
//	  deliveries             endpoint id + delivery id -> JSON job;
//	                         mail jobs under endpoint 0
//	  delivery_endpoint      delivery id -> endpoint id, + due time when
//	                         the delivery is pending
//	  sessions               session id -> JSON session
//	  user_sessions          user id + created time + session id -> empty
//	  verification_tokens    token id -> JSON verification token
//	  oauth_clients          client id -> JSON OAuth client
//	  signing_keys           key id -> JSON signing key
//	  auth_requests          request id -> JSON authorization request
//	  grants                 grant id -> JSON grant
//	  user_grants            user id + created time + grant id -> empty,
//	                         for grants of a user (UserID not 0)
//	  refresh_tokens         token id -> JSON refresh token
//	  login_attempts         user id -> JSON lockout state
//	  second_factors         user id -> JSON second factor
//	  user_mail              user id + delivery id -> empty, for mail
//	                         jobs of a user
//	  user_auth_requests     user id + request id -> empty, for requests
//	                         a user signed in to
//	  user_tokens            user id + token id -> empty
//	  grant_refresh_tokens   uvarint length + grant id + token id -> empty
//	  sweep                  class + time + record id -> empty: what a
//	                         sweep removes, by when (see sweep.go)
//	  webhook_events         uvarint length + event type + endpoint id
//	                         -> empty: the endpoints of each event type
//	  attr_values            uvarint length + attribute key + uvarint
//	                         length + value + user id -> empty: the users
//	                         of each attribute value (see attrindex.go)
//	  attr_value_counts      uvarint length + attribute key + uvarint
//	                         length + value -> uint64 number of users
//	                         with that value
//	  roles                  role id -> JSON role record
//	  role_names             folded name -> role id
//	  groups                 group id -> JSON group record
//	  group_names            folded name -> group id
//	  group_members          group id + user id -> empty
//	  user_groups            user id + group id -> empty
//	  group_roles            group id + role id -> empty
//	  role_groups            role id + group id -> empty
//	  role_holders           role id + user id -> holding: byte 1 when
//	                         the role is assigned directly, then uvarint
//	                         number of the user's groups that carry it
//	                         (see access.go)
//	  role_holder_counts     role id -> uint64 number of its holders
//	  group_member_counts    group id -> uint64 number of its members
//	  idempotency            scope + key -> JSON idempotency record
//	  assets                 name -> asset record (binary, see
//	                         encodeAsset): the files the workspace serves
//	  audit                  record id -> audit record (binary, see
//	                         encodeAudit): the audit trail
//	  audit_index            index byte (by actor, target, action or
//	                         outcome) + uvarint length + actor kind +
//	                         uvarint length + actor id (target kind and
//	                         id; or uvarint length + action, or outcome)
//	                         + record id -> empty: the trail's four
//	                         indexes in one bucket (see audit.go)
//	  audit_folded           "through" -> the id of the last record
//	                         whose entries are in audit_index
//	  meta                   "user_count", "role_count", "group_count"
//	                         -> uint64 number of users, roles, groups
//	  seq                    one nested bucket per sequence; its bbolt
//	                         sequence is the last id handed out
//
// delivery_due is the due index of store.Tx.DueDeliveries: a dispatcher
// finds due work across every workspace by walking it from its start, at
// a cost that depends on the work found, not on the deliveries queued. A
// delivery's due time is store.Delivery.DueAt. The key's fixed-size fields
// come before the slug, so it parses back whatever the slug. The due time
// kept in delivery_endpoint lets PutDelivery and DeleteWebhook remove a
// delivery's old delivery_due entry without decoding its record, and the
// count in meta makes PendingDeliveries one read. Every write keeps the
// three in step in its own transaction. WorkspaceQueue walks delivery_due
// from its start too, over at most its limit of keys, and counts those
// that end with the workspace's slug: a workspace keeps no due index or
// count of its own, so that an enqueue writes no more than the dispatcher
// needs.
//
// A file written before a bucket existed opens cleanly: Open creates the
// missing buckets (a file without assets gets an empty assets bucket per
// workspace, which is all it needs). Its deliveries have no status, so
// none is pending and the empty due index agrees with them. The four
// indexes that serve DeleteUser alone (user_mail, user_auth_requests,
// user_tokens, grant_refresh_tokens) are built from the records when
// Open creates them. A file written by the release before this one holds,
// in each workspace's bucket, a bucket due (due time + job id -> empty,
// one entry per pending job of the workspace) and under
// "pending_deliveries" in the workspace's meta their number, which every
// enqueue and every change of a job's status wrote: Open deletes both
// (WorkspaceQueue reads delivery_due). That release, opening the file
// again, builds them anew from delivery_endpoint. DeleteUser reads a user's records off the per-user
// indexes and DeleteWorkspace deletes the workspace's bucket, with its
// entries in the top-level buckets (see erasure.go).
//
// A job's kind is where it is stored: the front passes only positive
// endpoint ids, so a job under endpoint 0 is a mail job and any other a
// webhook job. The previous release stored them the same way, so its
// files need no migration.
//
// bbolt cannot store an empty key, yet the empty string is a username or
// email like any other for the unique indexes. store.Fold always returns
// valid UTF-8, in which the byte 0xFF never occurs, so the one-byte key 0xFF
// stands for the empty string there.
//
// User, claim mapper, asset and audit records are hand-written binary
// encodings (see encodeUser, encodeMapper, encodeAsset and encodeAudit)
// because users are read on every login and listed by the million, every
// token reads all of a workspace's mappers, an asset is mostly bytes,
// which JSON would write in base64, a third larger, and the audit trail
// is the largest bucket of a busy workspace, its changes bytes too;
// every other record is JSON of a
// private record type, so the file format never follows a change of the
// store package's structs by accident.
// A JSON time that is usually zero (a webhook's FailingSince, a delivery's
// LeaseUntil and LastAttemptAt, a session's RevokedAt, the times a signing
// key, an authorization request, a grant or a refresh token acquires
// later, the end of a user's lock, when a second factor was confirmed)
// is omitted when zero, so that a record written before the field existed
// reads back zero; so is a verification token's purpose while it is
// store.PurposeVerifyEmail, the purpose of every token written before
// purposes existed. Likewise the fields added to JSON records since (a
// session's UserAgent, Address and AMR, an authorization request's
// UILocales and AMR, a grant's AMR, a refresh token's SuccessorID) are
// omitted when empty: a record written before them reads back without
// them, and one that has none costs no more bytes than it did.
//
// Session ids are opaque strings chosen by the caller and are the keys of
// sessions; since bbolt cannot store an empty key, PutSession refuses the
// empty id with an error. (The front refuses an empty id for OAuth
// clients, signing keys, authorization requests, grants and refresh
// tokens before this package sees one.) PutAsset refuses the empty name
// likewise.
//
// Listing users without a prefix must reach deep offsets without walking
// every user: user_chunks counts the users of each chunk of 1024 consecutive
// id keys, so offset o costs one step per chunk before it plus fewer than
// 1024 cursor steps inside it. A search reads its total from
// user_prefixes, which counts every prefix of up to three runes and the
// longer ones under a prefix more than 4,096 users have, and finds its
// page either in the three folded indexes or by scanning the chunks that
// hold its first rune, whichever costs less; a prefix that is not counted
// matches at most 4,096 users, whose index entries it walks (see
// prefixes.go).
//
// The audit trail keeps its records by their time-ordered ids, and an
// index by actor, by target, by action and by outcome whose entries end
// with the record's id, so that a page of records filtered by any one of
// them is a walk of one range in id order (one per action for several,
// merged), whatever the size of the trail (see audit.go). The four
// indexes share audit_index, and a record's entries are written by a
// fold of many records at once (the committer's, every 256 records of a
// workspace, and Open's and Close's), not by the commit that writes the
// record: a query reads the records past the fold's watermark besides
// its index's range. A file written before the trail gets its buckets,
// empty, from Open; a file written when each index had a bucket of its
// own gets audit_index filled from them, and them deleted; a file written
// before the fold has every record indexed, and gets its watermark set to
// the last.
//
// A lookup by attribute value (UsersByAttribute) reads its total from
// attr_value_counts and its page from a prefix scan of attr_values:
// offset plus limit cursor steps, whatever the number of users. Open
// builds both from user_attrs for a file written before they existed.
//
// The members of a group and the holders of a role, directly or through
// a group, are prefix scans of group_members and role_holders with their
// totals in counts, so that a page costs offset plus limit cursor steps
// whatever the size of the group; every change of an assignment, a
// membership or a group's roles moves them in its transaction (see
// access.go). A file written before roles were records has role ids in
// user_roles and no roles: Open gives each such id a record named
// "role-" and the id, dated Options.Now, moves the roles sequence past
// the largest, and builds the holders from the assignments, once, as the
// roles bucket it creates marks.
//
// # Group commit
//
// bbolt runs one read-write transaction at a time and each commit costs an
// fsync. Update therefore hands its function to a single committer
// goroutine, which takes the first waiting call, then every other call
// already waiting (up to Options.MaxGroupSize), and runs them all in one
// transaction with one fsync. A lone writer commits at once: nothing waits
// for company. If one function fails, the transaction is rolled back, the
// others are run again as a group, and the failing one is run alone later
// for its definitive result, the way bbolt's DB.Batch works; this is why
// store.Store allows fn to be called more than once. (A function that fails
// first in its transaction saw only committed state, so its error stands
// and it is not run again; a lone writer thus runs exactly once.) A panic
// in a function is recovered by the committer, the transaction rolled back
// and the panic raised again in the goroutine that called Update; the
// function is not run again. runtime.Goexit in a function (t.Fatal) fails
// that Update with an error, and a new committer takes over the rest.
//
// View does not go through the committer: it opens a bbolt read-only
// transaction in the caller's goroutine, and any number run in parallel
// with each other and with the writer.
//
// # What the front guarantees
//
// View and Update pass every call of fn a Tx of its own through
// store.RunView and store.RunUpdate, which guarantee that a write in a
// View returns store.ErrReadOnly, that a Tx used after its fn returned
// returns store.ErrTxDone (even while later calls of a group run in the
// same bbolt transaction, whose memory a kept Tx must not touch), and that
// PutDelivery sees only well-formed jobs, before a method of this package
// runs; its methods check none of that.
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/identitylib/identity/store"
)

// Defaults used for the zero fields of Options.
const (
	// DefaultTimeout is how long Open waits for the file lock: long enough
	// to ride out a previous process that is still exiting, short enough
	// that a second opener fails fast instead of hanging.
	DefaultTimeout = time.Second
	// DefaultInitialMmapSize is the size of the initial memory map. It
	// reserves address space only, not memory or disk, and spares bbolt
	// remapping (which blocks the writer until every reader finishes) until
	// the file outgrows it.
	DefaultInitialMmapSize = 256 << 20
	// DefaultMaxGroupSize is the most Update calls committed together.
	DefaultMaxGroupSize = 128
)

// Options configures Open. A nil *Options, like any zero field, means the
// default.
type Options struct {
	// Timeout is how long Open waits for the exclusive file lock that
	// another Store or process may hold. Zero means DefaultTimeout; a
	// negative value waits indefinitely.
	Timeout time.Duration
	// InitialMmapSize is the initial size, in bytes, of the memory map.
	// Zero means DefaultInitialMmapSize.
	InitialMmapSize int
	// MaxGroupSize is the most Update calls the committer runs in one
	// transaction. Zero means DefaultMaxGroupSize; 1 turns group commit off.
	MaxGroupSize int
	// Now returns the current time; nil means time.Now. Open reads it
	// once, only when it upgrades a file written before roles were
	// records: the role records it creates are dated by it (see
	// store.Role).
	Now func() time.Time
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Timeout == 0 {
		out.Timeout = DefaultTimeout
	}
	if out.Timeout < 0 {
		out.Timeout = 0 // bbolt waits forever on zero
	}
	if out.InitialMmapSize <= 0 {
		out.InitialMmapSize = DefaultInitialMmapSize
	}
	if out.MaxGroupSize <= 0 {
		out.MaxGroupSize = DefaultMaxGroupSize
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out
}

// Store is a store.Store kept in a bbolt file. It is safe for concurrent
// use. Create one with Open and release it with Close.
type Store struct {
	db           *bbolt.DB
	maxGroupSize int

	// requests carries Update calls to the committer. It is unbuffered, so
	// a call is either taken by the committer or still held by its caller,
	// never stranded in a buffer when the committer stops.
	requests chan *updateCall
	// closing is closed by Close to stop the committer.
	closing chan struct{}
	// committerDone is closed by the committer when it stops.
	committerDone chan struct{}

	closeOnce sync.Once
	closeErr  error

	stats commitStats

	// unfolded counts, per workspace, the audit records committed since
	// its last fold (see foldAudit). Only the committer uses it.
	unfolded map[string]int
}

var _ store.Store = (*Store)(nil)

// Open opens the bbolt file at path, creating it with mode 0600 if it does
// not exist, and starts the committer. Only one Store may hold a file at a
// time: while another holds it, Open waits Options.Timeout for the lock and
// then fails with an error that wraps ErrTimeout of go.etcd.io/bbolt/errors
// (which bbolt.ErrTimeout, deprecated, is too).
func Open(path string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:         o.Timeout,
		InitialMmapSize: o.InitialMmapSize,
		// The hashmap freelist stays fast when a large file is fragmented.
		FreelistType: bbolt.FreelistMapType,
		// Not writing the freelist makes every commit cheaper (a large,
		// fragmented file's freelist is large); the price is that every
		// Open walks the file's pages to rebuild it: seconds for a file of
		// 10,000,000 users (BENCHMARKS.md). Commits stay durable: NoSync is
		// never set.
		NoFreelistSync: true,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: open %s: the file is locked by another Store or process (waited %v): %w", path, o.Timeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	if err := upgradeAuditIndexes(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("boltstore: open %s: upgrade the audit trail: %w", path, err)
	}
	if err := db.Update(func(btx *bbolt.Tx) error { return ensureLayout(btx, o.Now()) }); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("boltstore: open %s: create buckets: %w", path, err)
	}
	if err := foldEveryAudit(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	s := &Store{
		db:            db,
		maxGroupSize:  o.MaxGroupSize,
		requests:      make(chan *updateCall),
		closing:       make(chan struct{}),
		committerDone: make(chan struct{}),
		unfolded:      make(map[string]int),
	}
	s.startCommitter(nil)
	return s, nil
}

// View runs fn in a read-only bbolt transaction in the caller's goroutine.
// Writes inside fn return store.ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return store.ErrClosed
	}
	btx, err := s.db.Begin(false)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return store.ErrClosed // Close won the race after isClosed
	}
	if err != nil {
		return fmt.Errorf("boltstore: begin read: %w", err)
	}
	defer func() { _ = btx.Rollback() }()
	return store.RunView(&tx{btx: btx}, fn)
}

// Update runs fn in a read-write transaction, possibly together with other
// concurrent Updates (see the package documentation), and returns fn's own
// error. When it returns nil the transaction is committed and synced.
//
// ctx is checked before the call is handed to the committer, and while it
// waits to be handed over. Once the committer has taken the call it runs to
// its end even if ctx is cancelled meanwhile, and Update waits for its
// result: abandoning it would leave the caller unsure whether fn committed.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return store.ErrClosed
	}
	call := &updateCall{fn: fn, result: make(chan updateResult, 1)}
	select {
	case s.requests <- call:
	case <-s.closing:
		return store.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	res := <-call.result
	if res.panicked {
		panic(res.panicValue)
	}
	return res.err
}

// Close stops the committer, waits for the running transactions to end and
// closes the file. Updates still waiting to be taken by the committer return
// store.ErrClosed. A second Close returns store.ErrClosed, like every other
// call after Close.
func (s *Store) Close() error {
	first := false
	s.closeOnce.Do(func() {
		first = true
		close(s.closing)
		<-s.committerDone
		// A file closed cleanly has every audit record indexed, as
		// releases before the fold expect (see foldAudit).
		foldErr := foldEveryAudit(s.db)
		// bbolt's Close waits for open read transactions.
		s.closeErr = errors.Join(foldErr, s.db.Close())
	})
	if !first {
		return store.ErrClosed
	}
	return s.closeErr
}

var _ store.Exclusive = (*Store)(nil)

// Exclusive implements store.Exclusive: it returns true, because the
// file's lock keeps every other Store, of this process or another, from
// opening the file while this one has it open (see Open).
func (s *Store) Exclusive() bool { return true }

// isClosed reports whether Close has been called.
func (s *Store) isClosed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}
