package oidc

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
)

// MaxRequestBytes bounds the body of every request the handler reads.
const MaxRequestBytes = 64 << 10

// Options configure a Handler. A nil *Options means every default.
type Options struct {
	// Logger receives what the handler answers with a 500: a failure of
	// the store or the machine, with its cause (never sent to clients).
	// Default: slog.Default() at the time of New.
	Logger *slog.Logger
}

// Handler is the OpenID Provider of every workspace of a Service. It is
// safe for concurrent use. Create it with New.
type Handler struct {
	svc    *identity.Service
	logger *slog.Logger
	// protocol serves the JSON endpoints: op.Server over every workspace,
	// which it finds in the request's context.
	protocol http.Handler
}

// New returns the OpenID Provider of every workspace of svc. The Service
// must have been created with an IssuerBase and a TokenSigner (see
// identity.Options and Service.TokensReady); New returns its error
// otherwise.
func New(svc *identity.Service, opts *Options) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("oidc: New needs a Service")
	}
	if err := svc.TokensReady(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{svc: svc, logger: opts.Logger}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	endpoints := op.Endpoints{
		Token:         op.NewEndpoint(pathToken),
		Introspection: op.NewEndpoint(pathIntrospect),
		Userinfo:      op.NewEndpoint(pathUserInfo),
		Revocation:    op.NewEndpoint(pathRevoke),
		JwksURI:       op.NewEndpoint(pathKeys),
		// Authorization and EndSession are served by this package: see
		// the package documentation.
	}
	h.protocol = op.RegisterServer(&server{h: h}, endpoints, op.WithServerCORSOptions(&cors.Options{
		// The JSON endpoints answer any origin (a browser application
		// is a public client) and never read cookies.
		AllowOriginFunc: func(string) bool { return true },
		AllowedMethods:  []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:  []string{"Authorization", "Content-Type"},
	}))
	return h, nil
}

// The endpoints, relative to an issuer.
const (
	pathDiscovery  = ".well-known/openid-configuration"
	pathKeys       = "keys"
	pathAuthorize  = "authorize"
	pathLogin      = "login"
	pathToken      = "token"
	pathUserInfo   = "userinfo"
	pathRevoke     = "revoke"
	pathIntrospect = "introspect"
	pathEndSession = "end_session"
	pathAccount    = "account"
	pathReset      = "reset"
)

// route is how the handler serves one endpoint.
type route struct {
	path    string
	methods []string
	// serve handles the request; protocol routes go to op.Server.
	serve func(h *Handler, w http.ResponseWriter, r *http.Request, rq *request)
}

var (
	// The JSON endpoints take OPTIONS too: CORS preflight requests, which
	// op.Server answers.
	get      = []string{http.MethodGet, http.MethodHead, http.MethodOptions}
	getPost  = []string{http.MethodGet, http.MethodPost, http.MethodOptions}
	post     = []string{http.MethodPost, http.MethodOptions}
	pageForm = []string{http.MethodGet, http.MethodPost}
	routes   = []route{
		{pathDiscovery, get, (*Handler).serveProtocol},
		{pathKeys, get, (*Handler).serveProtocol},
		{pathAuthorize, pageForm, (*Handler).serveAuthorize},
		{pathLogin, pageForm, (*Handler).serveLogin},
		{pathToken, post, (*Handler).serveProtocol},
		{pathUserInfo, getPost, (*Handler).serveProtocol},
		{pathRevoke, post, (*Handler).serveProtocol},
		{pathIntrospect, post, (*Handler).serveProtocol},
		{pathEndSession, pageForm, (*Handler).serveEndSession},
		{pathAccount, pageForm, (*Handler).serveAccount},
		{pathReset, pageForm, (*Handler).serveReset},
	}
)

// request is what the handler learned of a request before serving it;
// op.Server's methods find it in their context.
type request struct {
	ws *identity.Workspace
	// endpoint is the endpoint's path relative to the issuer.
	endpoint string
	issuer   string
	// secure is whether the issuer is https (cookies are Secure then).
	secure bool
	// cookiePath is the issuer's path with a trailing slash: the
	// workspace's cookies are sent to its endpoints only.
	cookiePath string
	// header is the response's header, for headers op.Server's error
	// path cannot set (WWW-Authenticate).
	header http.Header
}

type requestKey struct{}

// requestOf returns the request a context carries.
func requestOf(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey{}).(*request)
	return rq
}

// ServeHTTP serves the endpoint the request's path ends with.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	slug, rt, ok := match(r.URL.Path)
	if !ok || identity.CheckSlug(slug) != nil {
		h.notFound(w, r)
		return
	}
	ws, err := h.svc.GetWorkspace(r.Context(), slug)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.internalError(w, r, "", err)
		return
	}
	issuer := ws.Issuer()
	u, err := url.Parse(issuer)
	if issuer == "" || err != nil {
		h.internalError(w, r, slug, errors.New("oidc: the Service has no IssuerBase"))
		return
	}
	if !allowed(rt.methods, r.Method) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		h.page(w, r, http.StatusMethodNotAllowed, pageData{Slug: slug, Title: "Method not allowed",
			Message: "This address does not accept " + r.Method + " requests."})
		return
	}
	if r.ContentLength > MaxRequestBytes {
		// Refused on the declared length, before the body is read: net/http
		// sends "100 Continue" at the first read, inviting the client to
		// send what would only be thrown away.
		http.Error(w, "the request body is too large", http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	}
	rq := &request{ws: ws, endpoint: rt.path, issuer: issuer, secure: u.Scheme == "https", cookiePath: u.EscapedPath() + "/", header: w.Header()}
	rt.serve(h, w, r.WithContext(context.WithValue(r.Context(), requestKey{}, rq)), rq)
}

// match splits a path ending in /t/{slug}/{endpoint} into the slug and
// the endpoint's route.
func match(path string) (string, route, bool) {
	for _, rt := range routes {
		rest, ok := strings.CutSuffix(path, "/"+rt.path)
		if !ok {
			continue
		}
		i := strings.LastIndex(rest, "/t/")
		if i < 0 {
			return "", route{}, false
		}
		slug := rest[i+len("/t/"):]
		return slug, rt, slug != "" && !strings.Contains(slug, "/")
	}
	return "", route{}, false
}

func allowed(methods []string, method string) bool {
	for _, m := range methods {
		if m == method {
			return true
		}
	}
	return false
}

// serveProtocol hands a request to op.Server, with the path op's router
// knows: the endpoint alone.
func (h *Handler) serveProtocol(w http.ResponseWriter, r *http.Request, rq *request) {
	u := *r.URL
	u.Path, u.RawPath = "/"+rq.endpoint, ""
	r2 := *r
	r2.URL = &u
	if rq.endpoint == pathUserInfo {
		w = challenger{w}
	}
	h.protocol.ServeHTTP(w, &r2)
}

// challenger adds the Bearer challenge RFC 6750 (3) asks of every 401 of
// a protected resource, where op.Server answered a request without a
// token before our code ran.
type challenger struct{ http.ResponseWriter }

func (c challenger) WriteHeader(status int) {
	if status == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", "Bearer")
	}
	c.ResponseWriter.WriteHeader(status)
}

// notFound answers a path that names no endpoint or no workspace.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.page(w, r, http.StatusNotFound, pageData{Title: "Not found", Message: "There is nothing at this address."})
}

// internalError logs a failure and answers 500 without its cause.
func (h *Handler) internalError(w http.ResponseWriter, r *http.Request, slug string, err error) {
	h.logFailure(r.Context(), r, err)
	h.page(w, r, http.StatusInternalServerError, pageData{Slug: slug, Title: "Something went wrong",
		Message: "The sign-in service could not complete this request. Try again in a moment."})
}

// logFailure logs an error the handler answers with a 500.
func (h *Handler) logFailure(ctx context.Context, r *http.Request, err error) {
	h.logger.ErrorContext(ctx, "oidc: request failed", "method", r.Method, "path", r.URL.Path, "error", err)
}
