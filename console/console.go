package console

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/requestinfo"
)

// The defaults of Options.
const (
	DefaultBasePath          = "/console/"
	DefaultOperatorWorkspace = "operators"
	// DefaultSessionLifetime bounds a console session from its sign-in:
	// a working day, after which the operator signs in again.
	DefaultSessionLifetime = 8 * time.Hour
	// DefaultIdleTimeout ends a console session unused for this long.
	DefaultIdleTimeout = 30 * time.Minute
)

// MaxFormBytes bounds the body of every form the console reads but a
// multipart one (a logo's upload), which has a bound of 1 MiB.
const MaxFormBytes = 64 << 10

// Options configure a Handler. A nil *Options means every default.
type Options struct {
	// BasePath is the path the console is mounted at, with a leading
	// and a trailing slash: the handler serves only paths under it and
	// builds every URL it writes from it. Default: DefaultBasePath
	// ("/console/").
	BasePath string
	// PublicURL is the absolute URL of BasePath as browsers see it
	// (scheme, host and BasePath), the base of the console's OAuth
	// redirect URI (PublicURL + "callback"). Default: the Service's
	// IssuerBase + BasePath. Cookies are Secure when it is https.
	PublicURL string
	// OperatorWorkspace is the slug of the workspace whose users are the
	// operators (see Prepare). Default: DefaultOperatorWorkspace
	// ("operators").
	OperatorWorkspace string
	// Logger receives what the console answers with a 500, at level
	// ERROR, with its cause (never shown to the operator). Default:
	// slog.Default() at the time of New.
	Logger *slog.Logger
	// SessionLifetime is how long a console session lasts after the
	// sign-in that started it. Default: DefaultSessionLifetime (8 h).
	SessionLifetime time.Duration
	// IdleTimeout ends a console session unused for this long. Default:
	// DefaultIdleTimeout (30 min).
	IdleTimeout time.Duration
}

// Handler is the operator console: an http.Handler over the public API
// of one identity.Service. It keeps no state of its own beyond its
// configuration and starts no goroutine; it is safe for concurrent use.
// Create it with New.
type Handler struct {
	svc       *identity.Service
	base      string
	publicURL string
	opSlug    string
	logger    *slog.Logger
	limits    identity.SessionLimits
	secure    bool
	csp       string
	mux       *http.ServeMux
	origin    *http.CrossOriginProtection
	pages     map[string]*template.Template
	routes    []route
}

// New returns the console over svc. The Service must issue tokens (an
// IssuerBase and a TokenSigner, see identity.Options), since operators
// sign in through its OpenID Provider. New checks the options; it does
// not touch the store (Prepare does).
func New(svc *identity.Service, opts *Options) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("console: New needs a Service")
	}
	if err := svc.TokensReady(); err != nil {
		return nil, fmt.Errorf("console: operators sign in through the OpenID Provider: %w", err)
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{svc: svc, base: opts.BasePath, publicURL: opts.PublicURL, opSlug: opts.OperatorWorkspace,
		logger: opts.Logger, limits: identity.SessionLimits{MaxAge: opts.SessionLifetime, IdleTimeout: opts.IdleTimeout}}
	if h.base == "" {
		h.base = DefaultBasePath
	}
	if !strings.HasPrefix(h.base, "/") || !strings.HasSuffix(h.base, "/") || strings.Contains(h.base, "//") ||
		strings.ContainsAny(h.base, "{}?#% ") {
		return nil, fmt.Errorf("console: BasePath %q must start and end with a slash and hold no '{', '}', '?', '#', '%%' or space", h.base)
	}
	if h.opSlug == "" {
		h.opSlug = DefaultOperatorWorkspace
	}
	if err := identity.CheckSlug(h.opSlug); err != nil {
		return nil, fmt.Errorf("console: OperatorWorkspace: %w", err)
	}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	if h.limits.MaxAge == 0 {
		h.limits.MaxAge = DefaultSessionLifetime
	}
	if h.limits.IdleTimeout == 0 {
		h.limits.IdleTimeout = DefaultIdleTimeout
	}
	if h.limits.MaxAge < 0 || h.limits.IdleTimeout < 0 {
		return nil, errors.New("console: SessionLifetime and IdleTimeout must not be negative")
	}
	if h.publicURL == "" {
		h.publicURL = strings.TrimSuffix(svc.IssuerBase(), "/") + h.base
	}
	pub, err := url.Parse(h.publicURL)
	if err != nil || pub.Scheme != "https" && pub.Scheme != "http" || pub.Host == "" || pub.RawQuery != "" ||
		pub.Fragment != "" || !strings.HasSuffix(pub.Path, "/") {
		return nil, fmt.Errorf("console: PublicURL %q must be an absolute http(s) URL ending with a slash, without query or fragment", h.publicURL)
	}
	h.secure = pub.Scheme == "https"
	op, err := url.Parse(svc.IssuerBase())
	if err != nil {
		return nil, fmt.Errorf("console: the Service's IssuerBase: %w", err)
	}
	h.csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self' " +
		op.Scheme + "://" + op.Host + "; frame-ancestors 'none'; base-uri 'none'"
	if h.pages, err = h.parsePages(); err != nil {
		return nil, err
	}
	h.origin = http.NewCrossOriginProtection()
	h.mux = http.NewServeMux()
	h.routes = routeTable()
	for _, rt := range h.routes {
		h.mux.Handle(rt.method+" "+h.base+rt.pattern(), h.wrap(rt))
	}
	h.mux.HandleFunc(h.base, func(w http.ResponseWriter, r *http.Request) {
		rq := h.newRequest(w, r)
		h.loadOperator(rq)
		h.fail(rq, errNotFound)
	})
	return h, nil
}

// BasePath returns the path the console is mounted at (Options.BasePath).
func (h *Handler) BasePath() string { return h.base }

// OperatorWorkspace returns the slug of the operator workspace
// (Options.OperatorWorkspace).
func (h *Handler) OperatorWorkspace() string { return h.opSlug }

// PublicURL returns the absolute URL of the console (Options.PublicURL).
func (h *Handler) PublicURL() string { return h.publicURL }

// ServeHTTP serves the console's pages under BasePath. Every response
// carries the console's security headers (see the package
// documentation); a path outside BasePath is a 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	info := requestinfo.From(h.svc, r)
	hd.Set(requestinfo.HeaderRequestID, info.RequestID)
	r = r.WithContext(identity.WithRequestInfo(r.Context(), info))
	if !strings.HasPrefix(r.URL.Path, h.base) {
		http.NotFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// operatorWorkspace returns the operator workspace.
func (h *Handler) operatorWorkspace(ctx context.Context) (*identity.Workspace, error) {
	return h.svc.GetWorkspace(ctx, h.opSlug)
}

// wrap returns the handler of one route: the request's operator, the
// route's access rule, the checks of a POST, then the route's function,
// whose error becomes the page that explains it.
func (h *Handler) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rq := h.newRequest(w, r)
		if rt.access != asset {
			h.loadOperator(rq)
		}
		if err := h.admit(rq, rt); err != nil {
			h.fail(rq, err)
			return
		}
		if err := rt.serve(h, rq); err != nil {
			h.fail(rq, err)
		}
	})
}

// admit applies a route's access rule and, for a POST, the CSRF checks:
// Go's cross-origin protection, then the form's csrf token.
func (h *Handler) admit(rq *request, rt route) error {
	post := rt.method == http.MethodPost
	if post {
		// A multipart form (a logo's upload) has its own, larger bound;
		// every other form is bounded by MaxFormBytes.
		if err := parseMultipart(rq); err != nil {
			return err
		}
		if rq.r.MultipartForm == nil {
			rq.r.Body = http.MaxBytesReader(rq.w, rq.r.Body, MaxFormBytes)
		}
		if err := rq.r.ParseForm(); err != nil {
			return errBadForm
		}
		if err := h.origin.Check(rq.r); err != nil {
			return errForged
		}
	}
	if rt.access == public || rt.access == asset {
		return nil
	}
	if rq.op == nil {
		if post {
			return errSessionEnded
		}
		return errSignIn
	}
	if post && !rq.csrfValid() {
		return errForged
	}
	if !rq.op.grants.any() {
		return errNoRole
	}
	switch rt.access {
	case service:
		if !rq.op.grants.can("", post) {
			return errForbidden
		}
	case inWorkspace:
		if !rq.op.grants.can(rq.r.PathValue("slug"), post) {
			return errForbidden
		}
	}
	return nil
}
