package identity

import (
	"context"
	"errors"

	"github.com/identitylib/identity/store"
)

// ListUsersByAttribute returns a page of the users whose attribute key has exactly
// the value value, in ascending id order, disabled users included; Total
// counts all of them. The match is exact, byte for byte: case, spaces
// and the rest of the value count, and neither key nor value is a prefix
// or a pattern. A nil page is the first DefaultPageLimit users.
//
// key and value are checked by SetAttribute's rules, since no attribute
// can hold anything else: a key of 1-64 characters without NUL or a
// bidirectional control, a value of 0-1024 characters without NUL ("" is
// a value like any other). A key, value or page that breaks them is a
// CodeInvalid error listing every problem (fields "key", "value",
// "offset" and "limit").
//
// Every store indexes attributes by key and value, so that a lookup costs
// in proportion to its page and offset (and on PostgreSQL, for the total,
// to the users with the value), not to the workspace's users.
func (w *Workspace) ListUsersByAttribute(ctx context.Context, key, value string, page *Page) (List[User], error) {
	var p problems
	checkAttributeKey(&p, "key", key)
	checkAttributeValue(&p, "value", value)
	pg, err := page.resolve()
	if err != nil {
		e, ok := errors.AsType[*Error](err)
		if !ok {
			return List[User]{}, err
		}
		p.addFrom(e)
	}
	if err := p.err("invalid attribute lookup"); err != nil {
		return List[User]{}, err
	}
	var recs []store.User
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		recs, total, err = tx.UsersByAttribute(w.slug, store.AttributeQuery{Key: key, Value: value, Offset: pg.Offset, Limit: pg.Limit})
		return err
	})
	if err != nil {
		return List[User]{}, fromStore(err, "workspace")
	}
	return List[User]{Items: mapAll(recs, userFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}
