package memstore

import (
	"maps"
	"slices"

	"github.com/identitylib/identity/store"
)

// Permanent deletion: of a user and everything kept under its id, and of
// a workspace with everything in it. Each records one undo function that
// puts back all it removed.

// DeleteUser implements store.Tx. Sessions, grants and mail jobs come
// from their per-user indexes; authorization requests, single-use tokens,
// passkeys
// and the refresh tokens of the user's grants from a scan of the
// workspace's records of each kind (see the package documentation).
func (t *tx) DeleteUser(slug string, id int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	e, ok := n.users[id]
	if !ok {
		return store.ErrNotFound
	}
	t.deleteMemberships(n, id)
	var undo []func()

	delete(n.users, id)
	n.userIDs, _ = removeSorted(n.userIDs, id)
	if n.byUsername[e.fUsername] == id {
		delete(n.byUsername, e.fUsername)
	}
	if n.byEmail[e.fEmail] == id {
		delete(n.byEmail, e.fEmail)
	}
	undo = append(undo, func() {
		n.users[id] = e
		n.userIDs, _ = insertSorted(n.userIDs, id)
		n.byUsername[e.fUsername] = id
		n.byEmail[e.fEmail] = id
	})

	attrs := maps.Clone(n.attrs[id])
	for key := range attrs {
		n.deleteAttr(id, key)
	}
	undo = append(undo, func() {
		for key, value := range attrs {
			n.setAttr(id, key, value)
		}
	})
	undo = append(undo, takeKey(n.roles, id),
		takeKey(n.loginAttempts, id), takeKey(n.secondFactors, id))

	for _, sid := range slices.Collect(maps.Keys(n.byUser[id])) {
		s := n.sessions[sid]
		n.removeSession(s)
		undo = append(undo, func() { n.addSession(s) })
	}

	grantIDs := n.grantsByUser[id]
	for _, rt := range n.refreshTokens {
		if _, ok := grantIDs[rt.GrantID]; ok {
			undo = append(undo, takeKey(n.refreshTokens, rt.ID))
		}
	}
	for _, gid := range slices.Collect(maps.Keys(grantIDs)) {
		g := n.grants[gid]
		n.removeGrant(g)
		undo = append(undo, func() { n.addGrant(g) })
	}
	for rid, r := range n.authRequests {
		if r.UserID == id {
			undo = append(undo, takeKey(n.authRequests, rid))
		}
	}
	for vid, v := range n.tokens {
		if v.UserID == id {
			undo = append(undo, takeKey(n.tokens, vid))
		}
	}

	for pid, pk := range n.passkeys {
		if pk.UserID == id {
			undo = append(undo, takeKey(n.passkeys, pid))
		}
	}
	if h, ok := n.passkeyHandles[id]; ok {
		undo = append(undo, takeKey(n.passkeyHandles, id), takeKey(n.byHandle, string(h.Handle)))
	}

	for _, did := range slices.Collect(maps.Keys(n.mailOf[id])) {
		d := n.delivs[did]
		t.s.removeDelivery(n, d)
		undo = append(undo, func() { t.s.addDelivery(n, d) })
	}

	t.onUndo(func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	})
	return nil
}

// takeKey removes m[k], if it is there, and returns the function that
// puts it back. Deleting a key while ranging over its map is allowed.
func takeKey[K comparable, V any](m map[K]V, k K) func() {
	v, had := m[k]
	if !had {
		return func() {}
	}
	delete(m, k)
	return func() { m[k] = v }
}

// DeleteWorkspace implements store.Tx. It unlinks the workspace's
// namespace whole (the undo links it again), and removes the workspace's
// API keys and due-index entries, which the store keeps outside it.
func (t *tx) DeleteWorkspace(slug string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	delete(t.s.ws, slug)
	var keys []store.APIKey
	for id, k := range t.s.keys {
		if k.Workspace == slug {
			keys = append(keys, k)
			delete(t.s.keys, id)
		}
	}
	dueBefore := t.s.due
	t.s.due = slices.DeleteFunc(slices.Clone(t.s.due), func(e dueEntry) bool { return e.slug == slug })
	t.onUndo(func() {
		t.s.ws[slug] = n
		for _, k := range keys {
			t.s.keys[k.ID] = k
		}
		t.s.due = dueBefore
	})
	return nil
}
