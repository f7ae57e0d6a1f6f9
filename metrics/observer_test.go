package metrics_test

import (
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/metrics"
)

// Metrics observes the REST API's requests. The check is here, not in
// package metrics, so that metrics does not import httpapi.
var _ httpapi.Observer = (*metrics.Metrics)(nil)
