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
	// Queue is the workspace's share of the delivery queue, counted
	// among the identity.QueueStatsWalkMax earliest due jobs of every
	// workspace.
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
	// CountMax is where the sign-in counts stop (identity.OverviewCountMax)
	// and QueueWalk how many of the queue's earliest due jobs a
	// workspace's share is counted among (identity.QueueStatsWalkMax).
	CountMax, QueueWalk int
}

// queueFigures describe the delivery queue, or a workspace's share of it.
type queueFigures struct {
	// Pending counts the pending jobs: a floor when Capped (a workspace's
	// jobs among the identity.QueueStatsWalkMax earliest of the queue).
	Pending count
	// OldestDue is how long the earliest due job has waited; zero when
	// none is due.
	OldestDue time.Duration
	// Unseen says that the workspace's earliest job, if it has one, is
	// not among the jobs counted, so that OldestDue is not known.
	Unseen bool
}

// queueFiguresOf shows q at now.
func queueFiguresOf(q identity.QueueStats, now time.Time) queueFigures {
	return queueFigures{
		Pending:   count{N: q.Pending, Capped: q.Capped},
		OldestDue: q.OldestDueAge(now).Truncate(time.Second),
		Unseen:    q.Capped && q.NextDue.IsZero(),
	}
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
	d := dashboardData{Since: now.Add(-24 * time.Hour), Pager: newPager(offset, len(shown), len(all)),
		CountMax: identity.OverviewCountMax, QueueWalk: identity.QueueStatsWalkMax}
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
		f := queueFiguresOf(q, now)
		d.Queue = &f
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
		Queue:    queueFiguresOf(o.Queue, now),
		Failing:  o.FailingEndpoints,
	}, nil
}
