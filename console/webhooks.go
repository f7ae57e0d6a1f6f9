package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// webhooksData is the data of the page of a workspace's webhook
// endpoints.
type webhooksData struct {
	Slug      string
	Endpoints []identity.WebhookEndpoint
	Pager     pager
	// Events are the event types an endpoint may subscribe to.
	Events []identity.EventType
}

// webhooksView returns the page of the workspace's endpoints at the
// query's offset.
func (h *Handler) webhooksView(rq *request, ws *identity.Workspace) (*view, error) {
	offset := offsetOf(rq.r)
	list, err := ws.ListWebhooks(rq.ctx, &identity.Page{Offset: offset, Limit: pageSize})
	if err != nil {
		return nil, err
	}
	d := webhooksData{Slug: ws.Slug(), Endpoints: list.Items, Pager: newPager(offset, len(list.Items), list.Total),
		Events: identity.EventTypes()}
	return &view{Title: "Webhooks", Workspace: ws.Slug(), Data: d}, nil
}

// serveWebhooks lists the workspace's endpoints, with the form that
// creates one.
func (h *Handler) serveWebhooks(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	v, err := h.webhooksView(rq, ws)
	if err != nil {
		return err
	}
	// The notice of a deletion says only what is true now.
	if id, err := strconv.ParseInt(rq.r.URL.Query().Get("deleted"), 10, 64); err == nil && id > 0 {
		if _, err := ws.GetWebhook(rq.ctx, id); identity.ErrorCode(err) == identity.CodeNotFound {
			v.Notice = "Webhook endpoint " + strconv.FormatInt(id, 10) + " deleted."
		}
	}
	h.render(rq, http.StatusOK, "webhooks", v)
	return nil
}

// webhookCreatedData is the data of the page that shows a new endpoint's
// signing secret, the one time it is shown.
type webhookCreatedData struct {
	Slug     string
	Endpoint identity.WebhookEndpoint
	Secret   string
}

// createWebhook creates an endpoint and shows its secret once: the
// answer to the POST is the only page that holds it.
func (h *Handler) createWebhook(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	f := rq.r.PostForm
	created, err := ws.CreateWebhook(rq.ctx, identity.NewWebhook{
		URL: strings.TrimSpace(f.Get("url")), Description: f.Get("description"), Events: f["events"],
	})
	if err != nil {
		v, verr := h.webhooksView(rq, ws)
		if verr != nil {
			return verr
		}
		h.refuseForm(rq, "webhooks", v, err)
		return nil
	}
	h.render(rq, http.StatusOK, "webhook-created", &view{
		Title: "Webhook endpoint created", Workspace: ws.Slug(),
		Data: webhookCreatedData{Slug: ws.Slug(), Endpoint: created.Endpoint, Secret: created.Secret},
	})
	return nil
}

// webhookData is the data of an endpoint's page: the endpoint and a page
// of its deliveries.
type webhookData struct {
	Slug       string
	Endpoint   identity.WebhookEndpoint
	Deliveries []identity.Delivery
	Pager      pager
}

// webhookView returns the page of the path's endpoint with its
// deliveries at the query's offset.
func (h *Handler) webhookView(rq *request) (*identity.Workspace, *view, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, nil, err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return nil, nil, err
	}
	ep, err := ws.GetWebhook(rq.ctx, id)
	if err != nil {
		return nil, nil, err
	}
	offset := offsetOf(rq.r)
	list, err := ws.ListDeliveries(rq.ctx, id, &identity.Page{Offset: offset, Limit: pageSize})
	if err != nil {
		return nil, nil, err
	}
	d := webhookData{Slug: ws.Slug(), Endpoint: ep, Deliveries: list.Items,
		Pager: newPager(offset, len(list.Items), list.Total)}
	return ws, &view{Title: "Webhook endpoint " + strconv.FormatInt(id, 10), Workspace: ws.Slug(), Data: d}, nil
}

// serveWebhook shows an endpoint and its deliveries, with "retry now"
// for a failed one and "enable" for an endpoint the delivery rules
// disabled.
func (h *Handler) serveWebhook(rq *request) error {
	ws, v, err := h.webhookView(rq)
	if err != nil {
		return err
	}
	d := v.Data.(webhookData)
	q := rq.r.URL.Query()
	if q.Get("enabled") != "" && d.Endpoint.Enabled {
		v.Notice = "The endpoint is enabled: new events reach it again."
	}
	if did, err := strconv.ParseInt(q.Get("retried"), 10, 64); err == nil && did > 0 {
		if dl, err := ws.GetDelivery(rq.ctx, did); err == nil && dl.EndpointID == d.Endpoint.ID && dl.Status != identity.DeliveryFailed {
			v.Notice = "Delivery " + strconv.FormatInt(did, 10) + " queued again."
		}
	}
	h.render(rq, http.StatusOK, "webhook", v)
	return nil
}

// retryDelivery queues a failed delivery of the endpoint again.
func (h *Handler) retryDelivery(rq *request) error {
	ws, v, err := h.webhookView(rq)
	if err != nil {
		return err
	}
	d := v.Data.(webhookData)
	did, err := pathID(rq, "delivery")
	if err != nil {
		return err
	}
	dl, err := ws.GetDelivery(rq.ctx, did)
	if err != nil {
		return err
	}
	if dl.EndpointID != d.Endpoint.ID {
		return errNotFound
	}
	if err := ws.RetryDelivery(rq.ctx, did); err != nil {
		h.refuseForm(rq, "webhook", v, err)
		return nil
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "webhooks", d.Endpoint.ID),
		url.Values{"retried": {strconv.FormatInt(did, 10)}})
	return nil
}

// enableWebhook enables an endpoint the delivery rules disabled.
func (h *Handler) enableWebhook(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return err
	}
	if err := ws.EnableWebhook(rq.ctx, id); err != nil {
		return err
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "webhooks", id), url.Values{"enabled": {"1"}})
	return nil
}

// serveDeleteWebhook asks to confirm an endpoint's deletion.
func (h *Handler) serveDeleteWebhook(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return err
	}
	ep, err := ws.GetWebhook(rq.ctx, id)
	if err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "webhook-delete", &view{
		Title: "Delete webhook endpoint " + strconv.FormatInt(id, 10), Workspace: ws.Slug(),
		Data: webhookData{Slug: ws.Slug(), Endpoint: ep},
	})
	return nil
}

// deleteWebhook deletes an endpoint and its deliveries.
func (h *Handler) deleteWebhook(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return err
	}
	if err := ws.DeleteWebhook(rq.ctx, id); err != nil {
		return err
	}
	redirect(rq, h.href("workspaces", ws.Slug(), "webhooks"), url.Values{"deleted": {strconv.FormatInt(id, 10)}})
	return nil
}
