package identitytest

import "github.com/identitylib/identity"

// listItems returns the items of a page read with a nil Page (the first
// identity.DefaultPageLimit), for rules that hold fewer.
func listItems[T any](l identity.List[T], err error) ([]T, error) { return l.Items, err }
