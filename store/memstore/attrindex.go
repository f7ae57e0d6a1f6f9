package memstore

import (
	"fmt"

	"github.com/identitylib/identity/store"
)

// attrValue is an attribute key and one of its values: a key of byAttr.
type attrValue struct{ key, value string }

// UsersByAttribute implements store.Tx: the users of the value come from
// byAttr, already in id order, so the total is a length and the page a
// slice of it.
func (t *tx) UsersByAttribute(slug string, q store.AttributeQuery) ([]store.User, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	ids := n.byAttr[attrValue{q.Key, q.Value}]
	lo, hi := page(len(ids), max(q.Offset, 0), q.Limit)
	if lo == hi {
		return nil, len(ids), nil
	}
	users := make([]store.User, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		e, ok := n.users[id]
		if !ok {
			// PutUserAttribute took an attribute of a user who was never
			// stored, which the identity package never writes.
			return nil, 0, fmt.Errorf("memstore: attribute %q names user %d, which does not exist", q.Key, id)
		}
		users = append(users, copyUser(e.u))
	}
	return users, len(ids), nil
}
