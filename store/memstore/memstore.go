// Package memstore is an in-memory implementation of store.Store, meant for
// unit tests and ephemeral use.
//
// A Store keeps every record in Go maps guarded by one sync.RWMutex: Update
// holds the write lock for the whole transaction, View holds the read lock,
// so transactions are trivially serializable. An Update whose function
// returns an error or panics is rolled back by replaying an undo log of
// inverse operations in reverse order. Records are deep-copied on the way in
// and on the way out, so callers never alias stored state.
//
// memstore is built for tests and small data sets. User prefix search
// (Tx.Users) is a linear scan over the workspace's users in id order, and
// other listings sort on each call; it is not meant to hold millions of
// users. Nothing is persisted: the data is gone when the process exits.
//
// The users of each attribute value (UsersByAttribute) are kept in a map
// from key and value to their ids, ascending, which every attribute write
// and deletion keeps in step.
//
// The due index of every workspace's pending deliveries is one slice kept
// sorted by due time, then delivery id, then slug (the order boltstore
// uses), so DueDeliveries and NextDueAt read its start and
// PendingDeliveries is its length. Inserting and removing entries costs in
// proportion to the entries after them.
//
// DeleteUser finds the user's sessions, grants and mail jobs through
// per-user indexes, but the user's authorization requests, single-use
// tokens and the refresh tokens of the user's grants by scanning the
// workspace's records of each kind: linear in their number, like the
// prefix search. DeleteWorkspace unlinks the workspace's namespace whole.
//
// Session ids are opaque strings chosen by the caller; like boltstore,
// PutSession refuses the empty id with an error.
//
// The lock is not reentrant: a transaction function must not call View or
// Update on the same Store, or it deadlocks.
//
// View and Update pass their transactions to fn through store.RunView and
// store.RunUpdate, which guarantee that a write in a View returns
// store.ErrReadOnly, that a Tx used after fn returned returns
// store.ErrTxDone, and that PutDelivery sees only well-formed jobs, before
// a method of this package runs; its methods check none of that.
package memstore

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/identitylib/identity/store"
)

// Store is an in-memory store.Store. The zero value is not usable; create
// one with New. A Store is safe for concurrent use.
type Store struct {
	mu     sync.RWMutex
	closed bool
	ws     map[string]*namespace // by slug
	keys   map[string]store.APIKey
	// due holds an entry per pending delivery of any workspace, kept in
	// ascending dueEntry order.
	due []dueEntry
}

var _ store.Store = (*Store)(nil)

// namespace holds one workspace's record and everything that belongs to it.
type namespace struct {
	rec  store.Workspace
	seqs map[store.Sequence]int64

	users      map[int64]*userEntry
	userIDs    []int64          // ids of users, kept ascending
	byUsername map[string]int64 // Fold(Username) -> id
	byEmail    map[string]int64 // Fold(Email) -> id

	roles map[int64][]int64 // user id -> role ids, ascending
	// Roles and groups (access.go).
	roleRecs    map[int64]store.Role        // by id
	roleByName  map[string]int64            // Fold(Name) -> id
	groupRecs   map[int64]store.Group       // by id
	groupByName map[string]int64            // Fold(Name) -> id
	members     map[int64][]int64           // group id -> user ids, ascending
	userGroups  map[int64][]int64           // user id -> group ids, ascending
	groupRoles  map[int64][]int64           // group id -> role ids, ascending
	attrs       map[int64]map[string]string // user id -> attributes
	// byAttr holds, for every attribute key and value, the ids of the
	// users with it, ascending; setAttr and deleteAttr keep it in step.
	byAttr map[attrValue][]int64

	mappers map[string]store.ClaimMapper // by AttributeKey

	hooks    map[int64]store.Webhook
	hookIDs  []int64 // ids of webhooks, kept ascending
	delivs   map[int64]store.Delivery
	byTarget map[int64]map[int64]struct{} // endpoint id -> ids of its webhook jobs
	mail     map[int64]struct{}           // ids of mail jobs
	mailOf   map[int64]map[int64]struct{} // user id (never 0) -> ids of their mail jobs

	sessions map[string]store.Session      // by id
	byUser   map[int64]map[string]struct{} // user id -> session ids

	clients map[string]store.OAuthClient        // by id
	tokens  map[string]store.VerificationToken  // by id
	assets  map[string]store.Asset              // by name
	idem    map[idemKey]store.IdempotencyRecord // by scope and key

	signingKeys   map[string]store.SigningKey   // by id
	authRequests  map[string]store.AuthRequest  // by id
	grants        map[string]store.Grant        // by id
	grantsByUser  map[int64]map[string]struct{} // user id (never 0) -> grant ids
	refreshTokens map[string]store.RefreshToken // by id

	loginAttempts map[int64]store.LoginAttempts // by user id
	secondFactors map[int64]store.SecondFactor  // by user id

	passkeys       map[string]store.Passkey      // by credential id
	passkeyHandles map[int64]store.PasskeyHandle // by user id
	byHandle       map[string]int64              // handle -> user id

	audit map[string]store.AuditRecord // by id
}

// userEntry is a stored user with its folded index fields.
type userEntry struct {
	u                        store.User
	fUsername, fEmail, fName string
}

// New returns an empty, open Store.
func New() *Store {
	return &Store{
		ws:   make(map[string]*namespace),
		keys: make(map[string]store.APIKey),
	}
}

// newNamespace returns the empty namespace of a new workspace.
func newNamespace(w store.Workspace) *namespace {
	return &namespace{
		rec:        w,
		seqs:       make(map[store.Sequence]int64),
		users:      make(map[int64]*userEntry),
		byUsername: make(map[string]int64),
		byEmail:    make(map[string]int64),
		roles:      make(map[int64][]int64),

		roleRecs:    make(map[int64]store.Role),
		roleByName:  make(map[string]int64),
		groupRecs:   make(map[int64]store.Group),
		groupByName: make(map[string]int64),
		members:     make(map[int64][]int64),
		userGroups:  make(map[int64][]int64),
		groupRoles:  make(map[int64][]int64),

		attrs:    make(map[int64]map[string]string),
		byAttr:   make(map[attrValue][]int64),
		mappers:  make(map[string]store.ClaimMapper),
		hooks:    make(map[int64]store.Webhook),
		delivs:   make(map[int64]store.Delivery),
		byTarget: make(map[int64]map[int64]struct{}),
		mail:     make(map[int64]struct{}),
		mailOf:   make(map[int64]map[int64]struct{}),
		sessions: make(map[string]store.Session),
		byUser:   make(map[int64]map[string]struct{}),
		clients:  make(map[string]store.OAuthClient),
		tokens:   make(map[string]store.VerificationToken),
		assets:   make(map[string]store.Asset),
		idem:     make(map[idemKey]store.IdempotencyRecord),

		signingKeys:   make(map[string]store.SigningKey),
		authRequests:  make(map[string]store.AuthRequest),
		grants:        make(map[string]store.Grant),
		grantsByUser:  make(map[int64]map[string]struct{}),
		refreshTokens: make(map[string]store.RefreshToken),

		loginAttempts: make(map[int64]store.LoginAttempts),
		secondFactors: make(map[int64]store.SecondFactor),

		passkeys:       make(map[string]store.Passkey),
		passkeyHandles: make(map[int64]store.PasskeyHandle),
		byHandle:       make(map[string]int64),

		audit: make(map[string]store.AuditRecord),
	}
}

// View runs fn in a read-only transaction under the store's read lock.
// Writes inside fn return store.ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return store.ErrClosed
	}
	return store.RunView(&tx{s: s}, fn)
}

// Update runs fn in a read-write transaction under the store's write lock.
// If fn returns an error or panics, every write it made is undone before
// Update returns the error unchanged or the panic continues. fn is called
// exactly once.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return store.ErrClosed
	}
	t := &tx{s: s}
	committed := false
	defer func() {
		// Runs on error, on panic and on runtime.Goexit alike; a panic
		// keeps propagating after the rollback.
		if !committed {
			t.rollback()
		}
	}()
	if err := store.RunUpdate(t, fn); err != nil {
		return err
	}
	committed = true
	return nil
}

// Close closes the store and drops its data. It waits for running
// transactions to end. Later calls to View, Update and Close return
// store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	s.ws = nil
	s.keys = nil
	s.due = nil
	return nil
}

// tx is a transaction over a Store. Its caller holds the store's lock.
// View and Update pass it to fn through store.RunView and store.RunUpdate,
// which refuse writes in a View and any use after fn returned.
type tx struct {
	s    *Store
	undo []func()
	// keptAccess holds the namespaces whose roles and groups the undo log
	// has saved (see keepAccess).
	keptAccess map[*namespace]bool
}

var _ store.Tx = (*tx)(nil)

// rollback applies the undo log in reverse order.
func (t *tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// onUndo records the inverse of a write just made.
func (t *tx) onUndo(f func()) { t.undo = append(t.undo, f) }

// ns returns the workspace's namespace or store.ErrNotFound.
func (t *tx) ns(slug string) (*namespace, error) {
	n, ok := t.s.ws[slug]
	if !ok {
		return nil, store.ErrNotFound
	}
	return n, nil
}

// Copying. Times are normalized to what a persistent store returns: UTC,
// microsecond precision, no monotonic reading.

func normTime(tm time.Time) time.Time { return tm.Round(0).Truncate(time.Microsecond).UTC() }

func copyWorkspace(w store.Workspace) store.Workspace {
	w.CreatedAt = normTime(w.CreatedAt)
	w.Settings = slices.Clone(w.Settings)
	return w
}

func copyUser(u store.User) store.User {
	u.CreatedAt = normTime(u.CreatedAt)
	u.UpdatedAt = normTime(u.UpdatedAt)
	return u
}

func copyWebhook(w store.Webhook) store.Webhook {
	w.CreatedAt = normTime(w.CreatedAt)
	w.FailingSince = normTime(w.FailingSince)
	w.Events = slices.Clone(w.Events)
	return w
}

func copyDelivery(d store.Delivery) store.Delivery {
	d.CreatedAt = normTime(d.CreatedAt)
	d.NextAttemptAt = normTime(d.NextAttemptAt)
	d.LeaseUntil = normTime(d.LeaseUntil)
	d.LastAttemptAt = normTime(d.LastAttemptAt)
	d.Payload = slices.Clone(d.Payload)
	return d
}

func copySession(s store.Session) store.Session {
	s.CreatedAt = normTime(s.CreatedAt)
	s.ExpiresAt = normTime(s.ExpiresAt)
	s.LastSeenAt = normTime(s.LastSeenAt)
	s.RevokedAt = normTime(s.RevokedAt)
	s.SecretHash = slices.Clone(s.SecretHash)
	s.AMR = slices.Clone(s.AMR)
	return s
}

func copyAPIKey(k store.APIKey) store.APIKey {
	k.CreatedAt = normTime(k.CreatedAt)
	k.Scopes = slices.Clone(k.Scopes)
	k.SecretHash = slices.Clone(k.SecretHash)
	return k
}

// Records of one kind are kept in a map by key. These helpers are the
// reads and writes that every kind shares; each write records its
// inverse in the transaction's undo log.

// setRecord stores r under k in m.
func setRecord[K comparable, V any](t *tx, m map[K]V, k K, r V) {
	old, had := m[k]
	m[k] = r
	t.onUndo(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// getRecord returns a copy, made by clone, of the record stored under k
// in m, or store.ErrNotFound.
func getRecord[K comparable, V any](m map[K]V, k K, clone func(V) V) (V, error) {
	r, ok := m[k]
	if !ok {
		var zero V
		return zero, store.ErrNotFound
	}
	return clone(r), nil
}

// deleteRecord removes the record stored under k from m, or returns
// store.ErrNotFound.
func deleteRecord[K comparable, V any](t *tx, m map[K]V, k K) error {
	old, ok := m[k]
	if !ok {
		return store.ErrNotFound
	}
	delete(m, k)
	t.onUndo(func() { m[k] = old })
	return nil
}

// replaceRecord stores r in place of old, the record stored before it
// when had, through add and remove, which keep the indexes of a record
// in step with it.
func replaceRecord[V any](t *tx, old V, had bool, r V, add, remove func(V)) {
	if had {
		remove(old)
	}
	add(r)
	t.onUndo(func() {
		remove(r)
		if had {
			add(old)
		}
	})
}

// insertSorted inserts id into the ascending slice s if it is not there.
func insertSorted(s []int64, id int64) ([]int64, bool) {
	i, found := slices.BinarySearch(s, id)
	if found {
		return s, false
	}
	return slices.Insert(s, i, id), true
}

// removeSorted removes id from the ascending slice s if it is there.
func removeSorted(s []int64, id int64) ([]int64, bool) {
	i, found := slices.BinarySearch(s, id)
	if !found {
		return s, false
	}
	return slices.Delete(s, i, i+1), true
}

// page returns the bounds of the page [offset, offset+limit) within n items.
func page(n, offset, limit int) (lo, hi int) {
	if limit <= 0 {
		return 0, 0
	}
	lo = min(max(offset, 0), n)
	hi = lo + min(limit, n-lo)
	return lo, hi
}

// Workspaces.

// PutWorkspace implements store.Tx.
func (t *tx) PutWorkspace(w store.Workspace) error {
	w = copyWorkspace(w)
	if n, ok := t.s.ws[w.Slug]; ok {
		old := n.rec
		n.rec = w
		t.onUndo(func() { n.rec = old })
		return nil
	}
	t.s.ws[w.Slug] = newNamespace(w)
	t.onUndo(func() { delete(t.s.ws, w.Slug) })
	return nil
}

// Workspace implements store.Tx.
func (t *tx) Workspace(slug string) (store.Workspace, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Workspace{}, err
	}
	return copyWorkspace(n.rec), nil
}

// Workspaces implements store.Tx.
func (t *tx) Workspaces() ([]store.Workspace, error) {
	out := make([]store.Workspace, 0, len(t.s.ws))
	for _, slug := range slices.Sorted(maps.Keys(t.s.ws)) {
		out = append(out, copyWorkspace(t.s.ws[slug].rec))
	}
	return out, nil
}

// NextID implements store.Tx.
func (t *tx) NextID(slug string, seq store.Sequence) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	old, had := n.seqs[seq]
	n.seqs[seq] = old + 1
	t.onUndo(func() {
		if had {
			n.seqs[seq] = old
		} else {
			delete(n.seqs, seq)
		}
	})
	return old + 1, nil
}

// Users.

// PutUser implements store.Tx.
func (t *tx) PutUser(slug string, u store.User) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	e := &userEntry{
		u:         copyUser(u),
		fUsername: store.Fold(u.Username),
		fEmail:    store.Fold(u.Email),
		fName:     store.Fold(u.FullName),
	}
	if id, ok := n.byUsername[e.fUsername]; ok && id != u.ID {
		return store.ErrConflict
	}
	if id, ok := n.byEmail[e.fEmail]; ok && id != u.ID {
		return store.ErrConflict
	}

	old, existed := n.users[u.ID]
	if existed {
		delete(n.byUsername, old.fUsername)
		delete(n.byEmail, old.fEmail)
	} else {
		n.userIDs, _ = insertSorted(n.userIDs, u.ID)
	}
	n.users[u.ID] = e
	n.byUsername[e.fUsername] = u.ID
	n.byEmail[e.fEmail] = u.ID

	t.onUndo(func() {
		delete(n.byUsername, e.fUsername)
		delete(n.byEmail, e.fEmail)
		if existed {
			n.users[u.ID] = old
			n.byUsername[old.fUsername] = u.ID
			n.byEmail[old.fEmail] = u.ID
		} else {
			delete(n.users, u.ID)
			n.userIDs, _ = removeSorted(n.userIDs, u.ID)
		}
	})
	return nil
}

// User implements store.Tx.
func (t *tx) User(slug string, id int64) (store.User, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.User{}, err
	}
	e, ok := n.users[id]
	if !ok {
		return store.User{}, store.ErrNotFound
	}
	return copyUser(e.u), nil
}

// UserIDByUsername implements store.Tx.
func (t *tx) UserIDByUsername(slug, username string) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	id, ok := n.byUsername[store.Fold(username)]
	if !ok {
		return 0, store.ErrNotFound
	}
	return id, nil
}

// UserIDByEmail implements store.Tx.
func (t *tx) UserIDByEmail(slug, email string) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	id, ok := n.byEmail[store.Fold(email)]
	if !ok {
		return 0, store.ErrNotFound
	}
	return id, nil
}

// Users implements store.Tx. It scans the workspace's users in ascending
// id order, so it is linear in the number of users in the workspace.
func (t *tx) Users(slug string, q store.UserQuery) ([]store.User, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	prefix := store.Fold(q.Prefix)
	offset := max(q.Offset, 0)
	var users []store.User
	total := 0
	for _, id := range n.userIDs {
		e := n.users[id]
		if prefix != "" &&
			!strings.HasPrefix(e.fUsername, prefix) &&
			!strings.HasPrefix(e.fEmail, prefix) &&
			!strings.HasPrefix(e.fName, prefix) {
			continue
		}
		if total >= offset && len(users) < q.Limit {
			users = append(users, copyUser(e.u))
		}
		total++
	}
	return users, total, nil
}

// Roles.

// UserRoles implements store.Tx.
func (t *tx) UserRoles(slug string, userID int64) ([]int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	return slices.Clone(n.roles[userID]), nil
}

// AddUserRole implements store.Tx.
func (t *tx) AddUserRole(slug string, userID, roleID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	roles, added := insertSorted(n.roles[userID], roleID)
	if !added {
		return nil
	}
	n.roles[userID] = roles
	t.onUndo(func() {
		rs, _ := removeSorted(n.roles[userID], roleID)
		if len(rs) == 0 {
			delete(n.roles, userID)
		} else {
			n.roles[userID] = rs
		}
	})
	return nil
}

// RemoveUserRole implements store.Tx.
func (t *tx) RemoveUserRole(slug string, userID, roleID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	roles, removed := removeSorted(n.roles[userID], roleID)
	if !removed {
		return store.ErrNotFound
	}
	if len(roles) == 0 {
		delete(n.roles, userID)
	} else {
		n.roles[userID] = roles
	}
	t.onUndo(func() {
		n.roles[userID], _ = insertSorted(n.roles[userID], roleID)
	})
	return nil
}

// Attributes.

// UserAttributes implements store.Tx.
func (t *tx) UserAttributes(slug string, userID int64) (map[string]string, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(n.attrs[userID])
	if out == nil {
		out = make(map[string]string)
	}
	return out, nil
}

// PutUserAttribute implements store.Tx.
func (t *tx) PutUserAttribute(slug string, userID int64, key, value string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	old, had := n.attrs[userID][key]
	n.setAttr(userID, key, value)
	t.onUndo(func() {
		if had {
			n.setAttr(userID, key, old)
		} else {
			n.deleteAttr(userID, key)
		}
	})
	return nil
}

// DeleteUserAttribute implements store.Tx.
func (t *tx) DeleteUserAttribute(slug string, userID int64, key string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	old, had := n.attrs[userID][key]
	if !had {
		return store.ErrNotFound
	}
	n.deleteAttr(userID, key)
	t.onUndo(func() { n.setAttr(userID, key, old) })
	return nil
}

// setAttr sets one attribute of the user and moves the user in byAttr
// from the old value to the new one.
func (n *namespace) setAttr(userID int64, key, value string) {
	m := n.attrs[userID]
	if m == nil {
		m = make(map[string]string)
		n.attrs[userID] = m
	}
	if old, had := m[key]; had {
		n.unindexAttr(userID, attrValue{key, old})
	}
	m[key] = value
	av := attrValue{key, value}
	n.byAttr[av], _ = insertSorted(n.byAttr[av], userID)
}

// deleteAttr removes one attribute of the user, with its byAttr entry,
// and the user's map when it becomes empty.
func (n *namespace) deleteAttr(userID int64, key string) {
	m := n.attrs[userID]
	if old, had := m[key]; had {
		n.unindexAttr(userID, attrValue{key, old})
	}
	delete(m, key)
	if len(m) == 0 {
		delete(n.attrs, userID)
	}
}

// unindexAttr removes the user from the users of av, and av from byAttr
// when no user is left.
func (n *namespace) unindexAttr(userID int64, av attrValue) {
	ids, _ := removeSorted(n.byAttr[av], userID)
	if len(ids) == 0 {
		delete(n.byAttr, av)
		return
	}
	n.byAttr[av] = ids
}

// Claim mappers.

// ClaimMappers implements store.Tx.
func (t *tx) ClaimMappers(slug string) ([]store.ClaimMapper, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := slices.Collect(maps.Values(n.mappers))
	slices.SortFunc(out, func(a, b store.ClaimMapper) int { return cmp.Compare(a.AttributeKey, b.AttributeKey) })
	return out, nil
}

// PutClaimMapper implements store.Tx.
func (t *tx) PutClaimMapper(slug string, m store.ClaimMapper) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.mappers, m.AttributeKey, m)
	return nil
}

// DeleteClaimMapper implements store.Tx.
func (t *tx) DeleteClaimMapper(slug, attributeKey string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.mappers, attributeKey)
}

// Webhooks.

// PutWebhook implements store.Tx.
func (t *tx) PutWebhook(slug string, w store.Webhook) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	w = copyWebhook(w)
	old, had := n.hooks[w.ID]
	n.hooks[w.ID] = w
	if !had {
		n.hookIDs, _ = insertSorted(n.hookIDs, w.ID)
	}
	t.onUndo(func() {
		if had {
			n.hooks[w.ID] = old
		} else {
			delete(n.hooks, w.ID)
			n.hookIDs, _ = removeSorted(n.hookIDs, w.ID)
		}
	})
	return nil
}

// Webhook implements store.Tx.
func (t *tx) Webhook(slug string, id int64) (store.Webhook, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Webhook{}, err
	}
	return getRecord(n.hooks, id, copyWebhook)
}

// Webhooks implements store.Tx.
func (t *tx) Webhooks(slug string, offset, limit int) ([]store.Webhook, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	lo, hi := page(len(n.hookIDs), offset, limit)
	var out []store.Webhook
	for _, id := range n.hookIDs[lo:hi] {
		out = append(out, copyWebhook(n.hooks[id]))
	}
	return out, len(n.hookIDs), nil
}

// DeleteWebhook implements store.Tx.
func (t *tx) DeleteWebhook(slug string, id int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	old, had := n.hooks[id]
	if !had {
		return store.ErrNotFound
	}
	delete(n.hooks, id)
	n.hookIDs, _ = removeSorted(n.hookIDs, id)
	removed := make([]store.Delivery, 0, len(n.byTarget[id]))
	for did := range n.byTarget[id] {
		removed = append(removed, n.delivs[did])
	}
	for _, d := range removed {
		t.s.removeDelivery(n, d)
	}
	t.onUndo(func() {
		n.hooks[id] = old
		n.hookIDs, _ = insertSorted(n.hookIDs, id)
		for _, d := range removed {
			t.s.addDelivery(n, d)
		}
	})
	return nil
}

// API keys.

// PutAPIKey implements store.Tx.
func (t *tx) PutAPIKey(k store.APIKey) error {
	if _, err := t.ns(k.Workspace); err != nil {
		return err
	}
	setRecord(t, t.s.keys, k.ID, copyAPIKey(k))
	return nil
}

// APIKey implements store.Tx.
func (t *tx) APIKey(id string) (store.APIKey, error) {
	return getRecord(t.s.keys, id, copyAPIKey)
}

// APIKeys implements store.Tx. It scans every key in the store, so it is
// linear in their number.
func (t *tx) APIKeys(slug string) ([]store.APIKey, error) {
	if _, err := t.ns(slug); err != nil {
		return nil, err
	}
	var out []store.APIKey
	for _, k := range t.s.keys {
		if k.Workspace == slug {
			out = append(out, copyAPIKey(k))
		}
	}
	slices.SortFunc(out, func(a, b store.APIKey) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteAPIKey implements store.Tx.
func (t *tx) DeleteAPIKey(id string) error {
	return deleteRecord(t, t.s.keys, id)
}
