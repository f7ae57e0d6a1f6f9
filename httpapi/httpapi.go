package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/httpresp"
	"github.com/identitylib/identity/requestinfo"
	"github.com/julienschmidt/httprouter"
)

// Options configure the handler. A nil *Options means every default.
type Options struct {
	// Logger receives one line per request; default slog.Default(). The
	// records go to its Handler without a source position (a handler
	// with AddSource writes none for them).
	Logger *slog.Logger
	// Observer, when set, is told of every request once it is answered
	// (package metrics implements it). Default: none.
	Observer Observer
}

// Observer is told of each request the handler answers, for metrics.
//
// RequestDone is called once per request, when the handler returns
// (after a recovered panic too), with the request's method as the client
// sent it, the pattern of the route that served it, such as
// "/t/:slug/api/v1/users/:userId" (never the path, which holds ids and
// keys), or "" when no route matched (a 404, or a 405 for a known path),
// the status sent and how long the request took. It must be safe for
// concurrent use and return quickly; it should bound the methods it
// keeps apart, since a client may send any.
type Observer interface {
	RequestDone(method, route string, status int, d time.Duration)
}

// basePath prefixes every route; the slug names the workspace.
const basePath = "/t/:slug/api/v1"

// New returns the REST API of svc as an http.Handler serving
// /t/{slug}/api/v1/... . It may be mounted under a prefix with
// http.StripPrefix; Location headers are then relative to the handler (they
// lack the prefix).
func New(svc *identity.Service, opts *Options) http.Handler {
	if opts == nil {
		opts = &Options{}
	}
	h := &handler{svc: svc, logger: opts.Logger, observer: opts.Observer, router: httprouter.New()}
	// Redirects would answer a wrong path with a 3xx whose Location ignores
	// any mount prefix; an API client is better served by a plain 404.
	h.router.RedirectTrailingSlash = false
	h.router.RedirectFixedPath = false
	h.router.HandleMethodNotAllowed = true
	h.router.NotFound = http.HandlerFunc(notFound)
	h.router.MethodNotAllowed = http.HandlerFunc(methodNotAllowed)
	h.router.PanicHandler = recoverPanic
	for _, rt := range routes {
		h.router.Handle(rt.method, basePath+rt.path, h.authorized(rt))
	}
	h.router.GET(openAPIPath, serveOpenAPI)
	return h
}

// handler is the http.Handler New returns.
type handler struct {
	svc      *identity.Service
	logger   *slog.Logger // nil: slog.Default() at the time of the request
	observer Observer     // nil: none
	router   *httprouter.Router
}

// ServeHTTP routes the request, then tells the observer of it and logs
// one line about it, whatever happens, panics included.
//
// Every answer carries the request's id (package requestinfo: a trusted
// proxy's X-Request-Id, or a new one) in X-Request-Id, the id the audit
// records of the request's changes carry.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{Recorder: httpresp.Recorder{ResponseWriter: w}, start: time.Now(), info: requestinfo.From(h.svc, r)}
	defer h.done(r, rec)
	w.Header().Set(requestinfo.HeaderRequestID, rec.info.RequestID)
	h.router.ServeHTTP(rec, routable(r))
}

// done reports the request rec answered to the observer and the log. One
// clock reading serves both, and the log line's time: reading the clock
// is a noticeable share of a request's cost on some virtual machines.
func (h *handler) done(r *http.Request, rec *statusRecorder) {
	now := time.Now()
	status := rec.Status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	took := now.Sub(rec.start)
	if h.observer != nil {
		h.observer.RequestDone(r.Method, rec.route, status, took)
	}
	h.logRequest(r, rec, now, status, took)
}

// routable returns r with URL.Path in its escaped form, so that a
// percent-encoded slash in a path parameter (the attribute key "a/b" sent as
// a%2Fb) stays inside its segment and a parameter is decoded exactly once,
// by pathParam. Most paths need no escaping and r comes back as it is; the
// copy is shallow, as http.StripPrefix makes it.
func routable(r *http.Request) *http.Request {
	escaped := r.URL.EscapedPath()
	if escaped == r.URL.Path {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = escaped, ""
	r2.URL = &u
	return r2
}

// authorized turns a route into an httprouter.Handle: it names the route
// for the log, authorizes the key for the route's scopes (or those a query
// parameter calls for, see queryScopes) before anything else
// (body, path ids and stored data come later), runs the route and answers
// its error as a problem.
func (h *handler) authorized(rt route) httprouter.Handle {
	pattern, needs := basePath+rt.path, scopesOf(rt)
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		rec := recorderOf(w)
		rec.route = pattern
		// Every library call of the request knows its client (the
		// address, through the Service's trusted proxies, the
		// User-Agent and the request's id), as the OpenID Provider's
		// calls do, and, once the key is known, its actor: the key. The
		// routes make their calls with ctx, never with r.Context().
		ctx := identity.WithRequestInfo(r.Context(), rec.info)
		need := needs(r)
		ws, key, err := h.authorize(ctx, r, pathParam(ps, "slug"), need)
		if err != nil {
			err = challengeScopes(err, need)
		} else {
			ctx = identity.WithActor(ctx, identity.Actor{Kind: identity.ActorAPIKey, ID: key.ID, Display: key.Name})
			err = rt.serve(ctx, w, &call{r: r, ws: ws, params: ps, key: key.secret, pattern: pattern})
		}
		if err != nil {
			writeProblem(w, err)
		}
	}
}

// notFound answers a path that matches no route.
func notFound(w http.ResponseWriter, _ *http.Request) {
	writeProblem(w, &problem{
		Status: http.StatusNotFound, Code: string(identity.CodeNotFound),
		Detail: "the path matches no route of this API",
	})
}

// methodNotAllowed answers a known path with an unknown method; httprouter
// has set Allow already. It runs before authentication, as it reveals only
// the public route table.
func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, &problem{
		Status: http.StatusMethodNotAllowed, Code: codeMethodNotAllowed,
		Detail: fmt.Sprintf("the method is not allowed here; allowed: %s", w.Header().Get("Allow")),
	})
}

// recoverPanic answers a panic in a route with a 500 that tells nothing of
// it; the log line of the request carries the value and the stack.
func recoverPanic(w http.ResponseWriter, _ *http.Request, v any) {
	if v == http.ErrAbortHandler {
		panic(v) // the documented way to abort a response; net/http handles it
	}
	rec := recorderOf(w)
	rec.fail(fmt.Errorf("panic: %v", v))
	rec.stack = strings.TrimSpace(string(debug.Stack()))
	if rec.Status != 0 {
		return // the response has begun; nothing better can be sent
	}
	writeProblem(w, &problem{Status: http.StatusInternalServerError, Code: string(identity.CodeInternal), Detail: "internal error"})
}
