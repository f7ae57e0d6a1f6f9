// Package pagetest reads paginated listings whole, for tests of the
// packages around the identity package.
package pagetest

import (
	"context"

	"github.com/identitylib/identity"
)

// Items returns the items of a page read with a nil Page (the first
// identity.DefaultPageLimit), for tests that hold fewer.
func Items[T any](l identity.List[T], err error) ([]T, error) { return l.Items, err }

// AllDeliveries reads every delivery of the endpoint, page by page.
func AllDeliveries(ctx context.Context, ws *identity.Workspace, endpointID int64) ([]identity.Delivery, error) {
	var all []identity.Delivery
	for {
		page, err := ws.ListDeliveries(ctx, endpointID, &identity.Page{Offset: len(all), Limit: identity.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if len(page.Items) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}
