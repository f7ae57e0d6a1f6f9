package memstore

import (
	"cmp"
	"errors"
	"slices"

	"github.com/identitylib/identity/store"
)

// errEmptySessionID is returned by PutSession for a session without an id,
// which boltstore cannot store either.
var errEmptySessionID = errors.New("memstore: the session id is empty")

// PutSession implements store.Tx. It refuses the empty id.
func (t *tx) PutSession(slug string, s store.Session) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	if s.ID == "" {
		return errEmptySessionID
	}
	old, had := n.sessions[s.ID]
	replaceRecord(t, old, had, copySession(s), n.addSession, n.removeSession)
	return nil
}

// addSession stores s in n and its per-user index.
func (n *namespace) addSession(s store.Session) {
	n.sessions[s.ID] = s
	ids := n.byUser[s.UserID]
	if ids == nil {
		ids = make(map[string]struct{})
		n.byUser[s.UserID] = ids
	}
	ids[s.ID] = struct{}{}
}

// removeSession removes s, as stored, from n and its per-user index.
func (n *namespace) removeSession(s store.Session) {
	delete(n.sessions, s.ID)
	ids := n.byUser[s.UserID]
	delete(ids, s.ID)
	if len(ids) == 0 {
		delete(n.byUser, s.UserID)
	}
}

// Session implements store.Tx.
func (t *tx) Session(slug, id string) (store.Session, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Session{}, err
	}
	return getRecord(n.sessions, id, copySession)
}

// UserSessions implements store.Tx. It sorts the user's sessions on each
// call. A user without sessions, or unknown, has none; that is not an
// error.
func (t *tx) UserSessions(slug string, userID int64) ([]store.Session, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := make([]store.Session, 0, len(n.byUser[userID]))
	for id := range n.byUser[userID] {
		out = append(out, copySession(n.sessions[id]))
	}
	slices.SortFunc(out, func(a, b store.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}
