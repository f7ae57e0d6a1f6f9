package oidc

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/cors"
	httphelper "github.com/zitadel/oidc/v3/pkg/http"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/httpresp"
	"github.com/identitylib/identity/requestinfo"
)

// MaxRequestBytes bounds the body of every request the handler reads.
const MaxRequestBytes = 64 << 10

// Options configure a Handler. A nil *Options means every default.
type Options struct {
	// Logger receives one line per request at level INFO, as package
	// httpapi writes them (see the package documentation, Logging), and
	// what the handler answers with a 500 at level ERROR: a failure of
	// the store or the machine, with its cause (never sent to clients).
	// A program that wants only the failures gives it a handler whose
	// level is WARN. Default: slog.Default() at the time of New.
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
	// refuseQuery answers a request to a JSON endpoint that takes no
	// query string, with the CORS headers op.Server would send.
	refuseQuery http.Handler
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
	h.protocol = op.RegisterServer(&server{h: h}, endpoints, op.WithServerCORSOptions(corsOptions()))
	h.refuseQuery = cors.New(*corsOptions()).Handler(http.HandlerFunc(refuseQuery))
	return h, nil
}

// corsOptions are the CORS rules of the JSON endpoints: they answer any
// origin (a browser application is a public client) and never read
// cookies.
func corsOptions() *cors.Options {
	return &cors.Options{
		AllowOriginFunc: func(string) bool { return true },
		AllowedMethods:  []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:  []string{"Authorization", "Content-Type"},
	}
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
	// pageGet is a page whose GET has an effect (an email link): not HEAD.
	pageGet = []string{http.MethodGet}
	image   = []string{http.MethodGet, http.MethodHead}
	routes  = []route{
		{pathDiscovery, get, (*Handler).serveProtocol},
		{pathKeys, get, (*Handler).serveProtocol},
		{pathAuthorize, pageForm, page((*Handler).serveAuthorize)},
		{pathLogin, pageForm, page((*Handler).serveLogin)},
		{pathToken, post, (*Handler).serveProtocol},
		{pathUserInfo, getPost, (*Handler).serveProtocol},
		{pathRevoke, post, (*Handler).serveProtocol},
		{pathIntrospect, post, (*Handler).serveProtocol},
		{pathEndSession, pageForm, page((*Handler).serveEndSession)},
		{pathAccount, pageForm, page((*Handler).serveAccount)},
		{pathReset, pageForm, page((*Handler).serveReset)},
		{pathVerify, pageGet, page((*Handler).serveVerify)},
		{pathLogo, image, (*Handler).serveLogo},
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
	// path cannot set (WWW-Authenticate, Retry-After).
	header http.Header
	// log is the request's log line; code that learns which client the
	// request is for tells it (log.setClient).
	log *requestLog
}

type requestKey struct{}

// requestOf returns the request a context carries.
func requestOf(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey{}).(*request)
	return rq
}

// ServeHTTP serves the endpoint the request's path ends with, every
// library call it makes with the request's identity.RequestInfo in its
// context (package requestinfo: the client's address, through the
// trusted proxies, its User-Agent and the request's id, which every
// answer carries in X-Request-Id), and logs one line about it. The
// actor of the calls is who the endpoint knows the request comes from
// (see actor.go).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lw := &requestLog{Recorder: httpresp.Recorder{ResponseWriter: w}, start: time.Now()}
	defer h.logRequest(r, lw)
	w = lw
	info := requestinfo.From(h.svc, r)
	w.Header().Set(requestinfo.HeaderRequestID, info.RequestID)
	r = r.WithContext(identity.WithRequestInfo(r.Context(), info))
	slug, rt, ok := match(r.URL.Path)
	if ok {
		lw.route = routePattern(rt.path)
		lw.setClient(r.URL.Query().Get("client_id"))
	}
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
	lw.ws = ws
	issuer := ws.Issuer()
	u, err := url.Parse(issuer)
	if issuer == "" || err != nil {
		h.internalError(w, r, slug, errors.New("oidc: the Service has no IssuerBase"))
		return
	}
	if !allowed(rt.methods, r.Method) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		h.methodNotAllowed(w, r, slug)
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
	rq := &request{ws: ws, endpoint: rt.path, issuer: issuer, secure: u.Scheme == "https", cookiePath: u.EscapedPath() + "/", header: w.Header(), log: lw}
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
// knows: the endpoint alone. A request to an endpoint that takes no
// query string but has one is refused first (see takesNoQuery).
func (h *Handler) serveProtocol(w http.ResponseWriter, r *http.Request, rq *request) {
	if takesNoQuery[rq.endpoint] && r.URL.RawQuery != "" {
		h.refuseQuery.ServeHTTP(w, r)
		return
	}
	u := *r.URL
	u.Path, u.RawPath = "/"+rq.endpoint, ""
	r2 := *r
	r2.URL = &u
	if rq.endpoint == pathUserInfo {
		w = challenger{w}
	}
	h.protocol.ServeHTTP(w, &r2)
}

// takesNoQuery holds the endpoints that refuse any query string: the
// token, introspection and revocation endpoints, whose client credentials
// and tokens belong in the Authorization header or the form body (RFC
// 6749, 2.3.1: the secret MUST NOT be in the request URI; RFC 7009 and
// 7662 send the token in the body), and userinfo, whose access token
// belongs in the Authorization header or the form body (the URI query
// parameter of RFC 6750, 2.3 is a MAY, refused here: URLs end up in logs
// and browser histories). Any non-empty query is refused, not only the
// parameters that carry credentials: op.Server reads every parameter of
// the query as if it were in the body, so that any of them could carry a
// credential or change a grant, and none of these endpoints has a
// parameter that belongs in the query. An empty query ("?" alone) passes.
var takesNoQuery = map[string]bool{pathToken: true, pathIntrospect: true, pathRevoke: true, pathUserInfo: true}

// refuseQuery answers a request whose query takesNoQuery refuses: 400
// invalid_request, with the Bearer challenge of RFC 6750, 3.1 at
// userinfo. Nothing of the query is read.
func refuseQuery(w http.ResponseWriter, r *http.Request) {
	const description = "parameters are not accepted in the query string of this endpoint: send credentials and tokens in the Authorization header or the form body"
	if requestOf(r.Context()).endpoint == pathUserInfo {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_request"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	httphelper.MarshalJSONWithStatus(w, zoidc.ErrInvalidRequest().WithDescription(description), http.StatusBadRequest)
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

// logFailure logs an error the handler answers with a 500.
func (h *Handler) logFailure(ctx context.Context, r *http.Request, err error) {
	h.logger.ErrorContext(ctx, "oidc: request failed", "method", r.Method, "path", r.URL.Path, "error", err)
}
