package delivery

import (
	"errors"
	"testing"

	"github.com/identitylib/identity"
)

// TestOutcomeOf: what a recorded attempt counts as.
func TestOutcomeOf(t *testing.T) {
	failed := errors.New("HTTP status 502")
	tests := []struct {
		res  identity.Result
		out  identity.Outcome
		want AttemptOutcome
	}{
		{identity.Result{Status: 200}, identity.Outcome{Status: identity.DeliverySucceeded}, AttemptSucceeded},
		{identity.Result{Status: 502, Err: failed}, identity.Outcome{Status: identity.DeliveryPending}, AttemptFailedRetry},
		{identity.Result{Status: 502, Err: failed}, identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}, AttemptFailedPermanent},
		{identity.Result{Status: 410, Err: failed}, identity.Outcome{Status: identity.DeliveryFailed, Disabled: true}, AttemptFailedPermanent},
		{identity.Result{Status: 200}, identity.Outcome{Dropped: true}, AttemptDropped},
		{identity.Result{Status: 502, Err: failed}, identity.Outcome{Dropped: true}, AttemptDropped},
	}
	for _, tt := range tests {
		if got := outcomeOf(tt.res, tt.out); got != tt.want {
			t.Errorf("outcomeOf(%+v, %+v) = %s, want %s", tt.res, tt.out, got, tt.want)
		}
	}
}
