package memstore

import (
	"errors"

	"github.com/identitylib/identity/store"
)

// UsersByAttribute implements store.Tx. (Placeholder while the index is built.)
func (t *tx) UsersByAttribute(slug string, q store.AttributeQuery) ([]store.User, int, error) {
	return nil, 0, errors.New("memstore: attribute index not built yet")
}
