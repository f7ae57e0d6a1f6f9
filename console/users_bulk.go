package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/identitylib/identity"
)

// bulkMax is how many users one bulk request handles at most: a bulk
// action over more (a search with more matches) handles the first
// bulkMax and offers to go on with the next.
const bulkMax = 1000

// bulkAction is what a bulk request does to each user, with its words.
type bulkAction struct {
	name, verb, done string
	do               func(ctx context.Context, ws *identity.Workspace, id int64) error
}

// bulkActions are the bulk actions, by their form value.
var bulkActions = map[string]bulkAction{
	"disable": {"disable", "Disable", "disabled", func(ctx context.Context, ws *identity.Workspace, id int64) error {
		return ws.DisableUser(ctx, id)
	}},
	"enable": {"enable", "Enable", "enabled", func(ctx context.Context, ws *identity.Workspace, id int64) error {
		return ws.EnableUser(ctx, id)
	}},
	"revoke": {"revoke", "Revoke every session of", "signed out everywhere", func(ctx context.Context, ws *identity.Workspace, id int64) error {
		_, err := ws.RevokeUserSessions(ctx, id)
		return err
	}},
	"delete": {"delete", "Delete permanently", "deleted permanently", func(ctx context.Context, ws *identity.Workspace, id int64) error {
		_, err := ws.DeleteUserPermanently(ctx, id)
		return err
	}},
}

// bulkData is the data of the bulk page: the confirmation of a bulk
// action, then its outcome.
type bulkData struct {
	Slug   string
	Action string
	Verb   string
	// Scope is "selected" (IDs) or "search" (Q, from From).
	Scope string
	IDs   []int64
	Q     string
	From  int
	// Count is how many users this request handles; Matches, for a
	// search, how many it matches in all.
	Count, Matches int
	// Sample names the first users handled.
	Sample []userRow
	// More counts the users handled but not in Sample.
	More    int
	BulkMax int
	// Delete asks the operator to type Count to confirm.
	Delete bool
	// Done is set once the action ran: how many succeeded, were gone
	// already, were skipped (the operator themselves) or failed.
	Done                          bool
	DoneWord                      string
	Succeeded, Gone, Self, Failed int
	// NextFrom is the offset of the search's next users to handle, or -1.
	NextFrom int
	// BackURL returns to the list.
	BackURL string
}

// bulkUsers confirms a bulk action over a selection (the list's
// checkboxes) or over a search (every match, bulkMax at most per
// request), then runs it: each user in its own transaction, audited with
// the operator as the actor.
func (h *Handler) bulkUsers(rq *request) error {
	slug := rq.r.PathValue("slug")
	ws, err := h.svc.GetWorkspace(rq.ctx, slug)
	if err != nil {
		return err
	}
	f := rq.r.PostForm
	act, ok := bulkActions[f.Get("action")]
	if !ok {
		return &pageError{http.StatusUnprocessableEntity, "Choose an action", "Choose what to do to the users: disable, enable, revoke sessions or delete permanently."}
	}
	d := bulkData{Slug: slug, Action: act.name, Verb: act.verb, Scope: f.Get("scope"), Q: f.Get("q"), BulkMax: bulkMax,
		Delete: act.name == "delete", NextFrom: -1, DoneWord: act.done}
	d.BackURL = h.href("workspaces", slug, "users")
	var users []identity.User
	switch d.Scope {
	case "search":
		d.From, _ = strconv.Atoi(f.Get("from"))
		d.From = max(d.From, 0)
		if d.Q != "" {
			d.BackURL += "?q=" + url.QueryEscape(d.Q)
		}
		if users, d.Matches, err = h.searchBatch(rq, ws, d.Q, d.From); err != nil {
			return err
		}
	case "selected":
		seen := map[int64]bool{}
		for _, s := range f["id"] {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id <= 0 || seen[id] {
				continue
			}
			seen[id] = true
			d.IDs = append(d.IDs, id)
		}
		if len(d.IDs) == 0 {
			return &pageError{http.StatusUnprocessableEntity, "Nothing selected", "Select users in the list with their checkboxes first, or apply the action to the search."}
		}
		if len(d.IDs) > bulkMax {
			return &pageError{http.StatusUnprocessableEntity, "Too many users", "A bulk action handles at most " + strconv.Itoa(bulkMax) + " users per request: select fewer."}
		}
		for _, id := range d.IDs {
			u, err := ws.GetUser(rq.ctx, id)
			if identity.ErrorCode(err) == identity.CodeNotFound {
				continue
			}
			if err != nil {
				return err
			}
			users = append(users, u)
		}
	default:
		return errBadForm
	}
	d.Count = len(users)
	v := &view{Title: act.verb + " users", Workspace: slug, Data: &d}
	if f.Get("confirm") != "yes" || d.Delete && f.Get("typed") != strconv.Itoa(d.Count) {
		if f.Get("confirm") == "yes" {
			v.Error = "Type the number of users to delete exactly to confirm."
			v.Fields = map[string]string{"typed": "Type " + strconv.Itoa(d.Count) + " to confirm."}
		}
		for i, u := range users {
			if i == 50 {
				break
			}
			d.Sample = append(d.Sample, rowOf(u))
		}
		d.More = d.Count - len(d.Sample)
		status := http.StatusOK
		if v.Error != "" {
			status = http.StatusUnprocessableEntity
		}
		h.render(rq, status, "users-bulk", v)
		return nil
	}
	self := slug == h.opSlug
	for _, u := range users {
		if self && u.ID == rq.op.user.ID {
			d.Self++
			continue
		}
		switch err := act.do(rq.ctx, ws, u.ID); identity.ErrorCode(err) {
		case "":
			d.Succeeded++
		case identity.CodeNotFound:
			d.Gone++
		default:
			if identity.ErrorCode(err) == identity.CodeInternal {
				h.logger.ErrorContext(rq.ctx, "console: a bulk action failed", "action", act.name, "user", u.ID, "error", err)
			}
			d.Failed++
		}
	}
	if d.Scope == "search" {
		next, left := d.From+d.Count, d.Matches
		if d.Delete { // deleted users leave the search
			next, left = next-d.Succeeded-d.Gone, left-d.Succeeded-d.Gone
		}
		if next < left {
			d.NextFrom = next
		}
	}
	d.Done = true
	v.Title = act.verb + " users: done"
	h.render(rq, http.StatusOK, "users-bulk", v)
	return nil
}

// searchBatch returns the bulkMax users at most that the search matches
// from offset from, in id order, and how many it matches in all.
func (h *Handler) searchBatch(rq *request, ws *identity.Workspace, q string, from int) ([]identity.User, int, error) {
	var users []identity.User
	total := 0
	for len(users) < bulkMax {
		list, err := ws.ListUsers(rq.ctx, q, &identity.Page{Offset: from + len(users), Limit: min(identity.MaxPageLimit, bulkMax-len(users))})
		if err != nil {
			return nil, 0, err
		}
		total = list.Total
		users = append(users, list.Items...)
		if len(list.Items) == 0 || from+len(users) >= total {
			break
		}
	}
	return users, total, nil
}
