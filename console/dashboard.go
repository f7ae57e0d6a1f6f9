package console

import (
	"net/http"
	"strconv"
	"time"

	"github.com/identitylib/identity"
)

// dashboardPageSize is how many workspaces the dashboard shows at once.
const dashboardPageSize = 20

// count is a figure of the dashboard: a number, or at least Cap.
type count struct {
	N      int
	Capped bool
}

// String shows the count: "12", or "10000+" when capped.
func (c count) String() string {
	if c.Capped {
		return strconv.Itoa(c.N) + "+"
	}
	return strconv.Itoa(c.N)
}

// workspaceFigures are the dashboard's figures of one workspace, read by
// Workspace.GetOverview: no counter of its own anywhere.
type workspaceFigures struct {
	Slug string
	// Users counts the workspace's users.
	Users int
	// SignIns and Failures count the sign-ins that succeeded and failed
	// in the last 24 hours, from the audit trail, up to
	// identity.OverviewCountMax each.
	SignIns, Failures count
	// Locked counts the accounts locked now (a floor when Capped).
	Locked count
	// Queue is the workspace's share of the delivery queue.
	Queue queueFigures
	// Failing are the webhook endpoints failing or disabled.
	Failing []identity.WebhookEndpoint
}

// dashboardData is the dashboard's data.
type dashboardData struct {
	Workspaces []workspaceFigures
	Pager      pager
	// Queue is the delivery queue of the whole service (webhooks and
	// emails of every workspace), for console.viewer and console.admin.
	Queue *queueFigures
	// Since is the start of the 24 hours counted.
	Since time.Time
}

// queueFigures describe the delivery queue.
type queueFigures struct {
	Pending int
	// OldestDue is how long the earliest due job has waited; zero when
	// none is due.
	OldestDue time.Duration
}

// serveDashboard shows, for each workspace the operator may read, its
// users, the sign-ins and failures of the last 24 hours, and its webhook
// endpoints with those disabled; and the service's delivery queue to an
// operator who may read the whole service.
func (h *Handler) serveDashboard(rq *request) error {
	all, err := h.visibleWorkspaces(rq)
	if err != nil {
		return err
	}
	offset := min(offsetOf(rq.r), len(all))
	shown := all[offset:min(offset+dashboardPageSize, len(all))]
	now := h.svc.Now()
	d := dashboardData{Since: now.Add(-24 * time.Hour), Pager: newPager(offset, len(shown), len(all))}
	for _, ws := range shown {
		f, err := h.figures(rq, ws, now)
		if err != nil {
			return err
		}
		d.Workspaces = append(d.Workspaces, f)
	}
	if rq.op.grants.can("", false) {
		q, err := h.svc.GetQueueStats(rq.ctx)
		if err != nil {
			return err
		}
		d.Queue = &queueFigures{Pending: q.Pending, OldestDue: q.OldestDueAge(now).Truncate(time.Second)}
	}
	h.render(rq, http.StatusOK, "dashboard", &view{Title: "Dashboard", Data: d})
	return nil
}

// figures reads the dashboard's figures of one workspace.
func (h *Handler) figures(rq *request, ws *identity.Workspace, now time.Time) (workspaceFigures, error) {
	o, err := ws.GetOverview(rq.ctx)
	if err != nil {
		return workspaceFigures{}, err
	}
	return workspaceFigures{
		Slug:     ws.Slug(),
		Users:    o.Users,
		SignIns:  count{N: o.SignIns.Count, Capped: o.SignIns.Capped},
		Failures: count{N: o.SignInFailures.Count, Capped: o.SignInFailures.Capped},
		Locked:   count{N: o.LockedUsers, Capped: o.LockedUsersMore},
		Queue:    queueFigures{Pending: o.Queue.Pending, OldestDue: o.Queue.OldestDueAge(now).Truncate(time.Second)},
		Failing:  o.FailingEndpoints,
	}, nil
}
