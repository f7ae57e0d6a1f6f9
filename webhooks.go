package identity

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// WebhookEndpoint is a subscription of an HTTPS URL to event types. Its
// signing secret is returned once, by CreateWebhook, and never again.
type WebhookEndpoint struct {
	ID          int64       `json:"id"`
	URL         string      `json:"url"`
	Description string      `json:"description"`
	Events      []EventType `json:"events"`
	// Enabled is false once the delivery rules disabled the endpoint
	// (it answered 410 Gone, or its deliveries kept failing for the
	// policy's DisableAfter, 5 days by default); EnableWebhook enables it
	// again.
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"createdAt"`
	// FailingSince is when the endpoint's deliveries began to fail
	// without a success since; zero while they succeed.
	FailingSince time.Time `json:"failingSince,omitzero"`
	// Version changes on every write of the endpoint, the dispatcher's
	// included (see Precondition). It is not part of the JSON.
	Version int64 `json:"-"`
}

// NewWebhook is the input of CreateWebhook.
type NewWebhook struct {
	// URL: an absolute https URL with a host, at most 2048 characters. With
	// the SSRF guard on (the default), it may not name localhost or an IP
	// address that is not public.
	URL string
	// Description: optional, at most 1024 characters.
	Description string
	// Events: at least one, each in the catalogue (EventTypes), no
	// duplicates.
	Events []string
	// Idempotency, when not nil, makes the creation safe to retry: see
	// Idempotency. A replay returns the same secret.
	Idempotency *Idempotency
}

// CreatedWebhook is the result of CreateWebhook: the endpoint and its
// secret, which is shown only here.
type CreatedWebhook struct {
	Endpoint WebhookEndpoint `json:"endpoint"`
	// Secret is "whsec_" followed by the base64 of 32 random bytes, as the
	// Standard Webhooks specification writes signing secrets.
	Secret string `json:"secret"`
}

func webhookFromRecord(r store.Webhook) WebhookEndpoint {
	events := make([]EventType, len(r.Events))
	for i, e := range r.Events {
		events[i] = EventType(e)
	}
	return WebhookEndpoint{
		ID: r.ID, URL: r.URL, Description: r.Description, Events: events,
		Enabled: r.Enabled, CreatedAt: r.CreatedAt, FailingSince: r.FailingSince, Version: r.Version,
	}
}

// CreateWebhook registers an enabled endpoint and returns it with its
// secret. Unknown event names are a CodeInvalid error with one FieldError
// per unknown name. With nw.Idempotency, a retry returns the first call's
// outcome, secret included (see Idempotency).
func (w *Workspace) CreateWebhook(ctx context.Context, nw NewWebhook) (_ CreatedWebhook, err error) {
	once, err := w.beginIdempotent(ctx, nw.Idempotency, opCreateWebhook)
	if err != nil {
		return CreatedWebhook{}, err
	}
	if once.replaying() {
		var c CreatedWebhook
		err = once.replay(&c, &c.Endpoint.Version)
		return c, err
	}
	defer once.finish(ctx, &err)
	if err := nw.validate(w.svc.allowPrivateWebhooks); err != nil {
		return CreatedWebhook{}, err
	}
	secret, err := newWebhookSecret()
	if err != nil {
		return CreatedWebhook{}, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	rec := store.Webhook{
		URL: nw.URL, Description: nw.Description, Events: append([]string(nil), nw.Events...),
		Enabled: true, CreatedAt: w.svc.timestamp(), Secret: secret, Version: newVersion(0),
	}
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if err := once.check(tx); err != nil {
			return err
		}
		if err := w.checkEndpointRoom(tx); err != nil {
			return err
		}
		if rec.ID, err = tx.NextID(w.slug, store.SeqWebhooks); err != nil {
			return err
		}
		if err := tx.PutWebhook(w.slug, rec); err != nil {
			return err
		}
		changes := auditChanges{}.set("url", nil, rec.URL).set("events", nil, rec.Events)
		if rec.Description != "" {
			changes = changes.set("description", nil, rec.Description)
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditWebhookCreated, target: webhookTarget(rec), changes: changes}); err != nil {
			return err
		}
		return once.complete(tx, CreatedWebhook{Endpoint: webhookFromRecord(rec), Secret: secret}, rec.Version)
	})
	if err != nil {
		return CreatedWebhook{}, fromStore(err, "workspace")
	}
	return CreatedWebhook{Endpoint: webhookFromRecord(rec), Secret: secret}, nil
}

// webhookTarget is the endpoint as the target of an audit record: its
// signing secret is never part of one.
func webhookTarget(rec store.Webhook) AuditTarget {
	return AuditTarget{Kind: TargetWebhook, ID: strconv.FormatInt(rec.ID, 10), Display: rec.URL}
}

// checkEndpointRoom refuses a new endpoint in a workspace that has as
// many as its Limits allow.
func (w *Workspace) checkEndpointRoom(tx store.Tx) error {
	_, total, err := tx.Webhooks(w.slug, 0, 0)
	if err != nil {
		return err
	}
	set, err := w.settings(tx)
	if err != nil {
		return err
	}
	if limit := set.Limits.webhookEndpoints(); total >= limit {
		return errorf(CodeLimitReached, "the workspace already has the maximum of %d webhook endpoints", limit)
	}
	return nil
}

func (nw NewWebhook) validate(allowPrivate bool) error {
	var p problems
	checkWebhookURL(&p, nw.URL, allowPrivate)
	checkDescription(&p, "description", nw.Description)
	if len(nw.Events) == 0 {
		p.add("events", RuleRequired, "must name at least one event type")
	}
	seen := map[string]bool{}
	// The first unknown names, for the message, and how many there are.
	var unknown []string
	unknowns := 0
	for i, e := range nw.Events {
		// The field's name is formatted only for an event with a
		// problem, and past MaxFieldErrors of them not at all.
		field := func() string { return eventField(&p, i) }
		switch {
		case !utf8.ValidString(e):
			p.add(field(), RuleUTF8, "must be valid UTF-8")
		case !EventType(e).Known():
			if unknowns++; len(unknown) < maxNamesInMessage {
				unknown = append(unknown, e)
			}
			p.add(field(), RuleUnknown, "unknown event type %q", e)
		case seen[e]:
			p.add(field(), RuleDuplicate, "event type %q is listed twice", e)
		default:
			seen[e] = true
		}
	}
	message := "invalid webhook endpoint"
	if unknowns > 0 {
		message = "unknown event types: " + listSome(unknown, unknowns)
	}
	return p.err(message)
}

// eventField names the i-th event of a webhook's list, or nothing once p
// is full: add will only count the problem.
func eventField(p *problems, i int) string {
	if p.full() {
		return ""
	}
	return fmt.Sprintf("events[%d]", i)
}

// maxNamesInMessage bounds the names an error message lists, so that a
// request naming thousands of bad ones gets a message of bounded size.
const maxNamesInMessage = 10

// listSome joins names, the first of total names, with ", " (each cut to
// 64 characters) and says how many more there are.
func listSome(names []string, total int) string {
	shown := make([]string, 0, len(names))
	for _, n := range names {
		if r := []rune(n); len(r) > 64 {
			n = string(r[:64]) + "…"
		}
		shown = append(shown, n)
	}
	s := strings.Join(shown, ", ")
	if total > len(names) {
		s += fmt.Sprintf(" and %d more", total-len(names))
	}
	return s
}

func checkWebhookURL(p *problems, raw string, allowPrivate bool) {
	const field = "url"
	if !checkText(p, field, raw, 1, MaxWebhookURLLength) {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Scheme != "https" || u.Hostname() == "" || u.Opaque != "" {
		p.add(field, RuleFormat, "must be an absolute https URL with a host")
		return
	}
	if !allowPrivate && isPrivateHost(u.Hostname()) {
		p.add(field, RulePrivateAddress, "must not point at localhost or a non-public IP address")
	}
}

// isPrivateHost reports whether a URL host is localhost or an IP literal
// that is not a public unicast address. Host names are not resolved here;
// the addresses they resolve to are checked when a delivery dials them.
func isPrivateHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && !IsPublicAddress(addr)
}

func newWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// ListWebhooks returns a page of the workspace's endpoints in ascending id
// order, without secrets.
func (w *Workspace) ListWebhooks(ctx context.Context, page *Page) (List[WebhookEndpoint], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[WebhookEndpoint]{}, err
	}
	var recs []store.Webhook
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		recs, total, err = tx.Webhooks(w.slug, pg.Offset, pg.Limit)
		return err
	})
	if err != nil {
		return List[WebhookEndpoint]{}, fromStore(err, "workspace")
	}
	return List[WebhookEndpoint]{Items: mapAll(recs, webhookFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// GetWebhook returns the endpoint with the id, without its secret.
func (w *Workspace) GetWebhook(ctx context.Context, id int64) (WebhookEndpoint, error) {
	var rec store.Webhook
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if id <= 0 {
			return notFound("webhook endpoint %d not found", id)
		}
		rec, err = tx.Webhook(w.slug, id)
		return err
	})
	if err != nil {
		return WebhookEndpoint{}, fromStore(err, fmt.Sprintf("webhook endpoint %d", id))
	}
	return webhookFromRecord(rec), nil
}

// DeleteWebhook removes the endpoint permanently together with all its
// deliveries, in one transaction. Attempts to it that this process has in
// flight are cancelled before DeleteWebhook returns, and none is started
// after. A missing endpoint is a not-found error.
func (w *Workspace) DeleteWebhook(ctx context.Context, id int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		if id <= 0 {
			return notFound("webhook endpoint %d not found", id)
		}
		rec, err := tx.Webhook(w.slug, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteWebhook(w.slug, id); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditWebhookDeleted, target: webhookTarget(rec)})
	})
	if err != nil {
		return fromStore(err, fmt.Sprintf("webhook endpoint %d", id))
	}
	w.svc.endpointDeleted(w.slug, id)
	return nil
}

// EnableWebhook enables an endpoint that the delivery rules disabled (it
// answered 410 Gone, or failed for the retry policy's DisableAfter), with
// the audit record webhook.enabled. Its failing streak starts over
// (FailingSince is cleared), so that its next failure is the first of a
// new streak rather than a cause to disable it again at once. The
// deliveries failed by the disabling stay failed: RetryDelivery queues
// each again. Enabling an enabled endpoint succeeds and changes nothing.
// An unknown endpoint is a not-found error.
func (w *Workspace) EnableWebhook(ctx context.Context, id int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		if id <= 0 {
			return notFound("webhook endpoint %d not found", id)
		}
		rec, err := tx.Webhook(w.slug, id)
		if err != nil || rec.Enabled {
			return err
		}
		changes := auditChanges{}.set("enabled", false, true)
		if !rec.FailingSince.IsZero() {
			changes = changes.set("failingSince", rec.FailingSince, nil)
		}
		rec.Enabled, rec.FailingSince, rec.Version = true, time.Time{}, newVersion(rec.Version)
		if err := tx.PutWebhook(w.slug, rec); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditWebhookEnabled, target: webhookTarget(rec), changes: changes})
	})
	return fromStore(err, fmt.Sprintf("webhook endpoint %d", id))
}
