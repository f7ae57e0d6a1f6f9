package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"math"

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
	out, _, err := userRecords(sp, bucketUserSessions, bucketSessions, idKey(userID), 0, math.MaxInt, "session", decodeSession)
	return out, err
}

// UserSessionsPage implements store.Tx: the prefix scan of UserSessions,
// reading only the page's records.
func (t *tx) UserSessionsPage(slug string, userID int64, offset, limit int) ([]store.Session, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	return userRecords(sp, bucketUserSessions, bucketSessions, idKey(userID), offset, limit, "session", decodeSession)
}

// userRecords returns one page of the records of the bucket records that
// the per-user index (user_sessions, user_grants, whose keys are
// userIndexKey's) lists under prefix, a user's id key, in the index's
// order: those from offset on, at most limit of them. It returns how
// many the index lists in all too, and reads only the page's records.
func userRecords[T any](sp *space, index, records nested, prefix []byte, offset, limit int, what string,
	decode func(k, v []byte) (T, error)) ([]T, int, error) {
	var out []T
	total := 0
	c := sp.bucket(index).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if total >= offset && len(out) < limit {
			id := k[2*idKeyLen:]
			v := sp.bucket(records).Get(id)
			if v == nil {
				return nil, 0, fmt.Errorf("boltstore: %s names %s %q, which does not exist", nestedNames[index], what, id)
			}
			r, err := decode(id, v)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, r)
		}
		total++
	}
	return out, total, nil
}
