package boltstore

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/identitylib/identity/store"
)

// errEmptySessionID is returned by PutSession for a session without an id:
// bbolt cannot store an empty key, and no byte string can stand for the
// empty id without clashing with an opaque id a caller may choose.
var errEmptySessionID = errors.New("boltstore: the session id is empty")

// PutSession implements store.Tx. It refuses the empty id.
func (t *tx) PutSession(slug string, s store.Session) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if s.ID == "" {
		return errEmptySessionID
	}
	v, err := encodeSession(s)
	if err != nil {
		return err
	}
	sessions, k := sp.bucket(bucketSessions), []byte(s.ID)
	if err := moveIndexEntry(sessions, sp.bucket(bucketUserSessions), k, s, decodeSession, sessionEntry); err != nil {
		return err
	}
	if err := sp.resweep(bucketSessions, k, sessions.Get(k), sweepKey(sweepSession, s.EndedAt(), k)); err != nil {
		return err
	}
	return sessions.Put(k, v)
}

// Session implements store.Tx.
func (t *tx) Session(slug, id string) (store.Session, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Session{}, err
	}
	return getRecord(sp.bucket(bucketSessions), []byte(id), decodeSession, "session %q", id)
}

// UserSessions implements store.Tx: a prefix scan of user_sessions, whose
// keys order a user's sessions by creation time, then id. A user without
// sessions, or unknown, has none; that is not an error.
func (t *tx) UserSessions(slug string, userID int64) ([]store.Session, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	sessions, prefix := sp.bucket(bucketSessions), idKey(userID)
	var out []store.Session
	c := sp.bucket(bucketUserSessions).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[2*idKeyLen:]
		v := sessions.Get(id)
		if v == nil {
			return nil, fmt.Errorf("boltstore: user_sessions names session %q, which does not exist", id)
		}
		s, err := decodeSession(id, v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// UserSessionsPage implements store.Tx: the prefix scan of UserSessions,
// reading only the page's records.
func (t *tx) UserSessionsPage(slug string, userID int64, offset, limit int) ([]store.Session, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	sessions, prefix := sp.bucket(bucketSessions), idKey(userID)
	var out []store.Session
	total := 0
	c := sp.bucket(bucketUserSessions).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if total >= offset && len(out) < limit {
			id := k[2*idKeyLen:]
			v := sessions.Get(id)
			if v == nil {
				return nil, 0, fmt.Errorf("boltstore: user_sessions names session %q, which does not exist", id)
			}
			s, err := decodeSession(id, v)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, s)
		}
		total++
	}
	return out, total, nil
}
