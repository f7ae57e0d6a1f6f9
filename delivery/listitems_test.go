package delivery_test

import (
	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/pagetest"
)

// listItems and allDeliveries are the listing helpers of package pagetest.
func listItems[T any](l identity.List[T], err error) ([]T, error) { return pagetest.Items(l, err) }

var allDeliveries = pagetest.AllDeliveries
