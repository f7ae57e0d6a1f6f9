package oidc

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/httpresp"
)

// requestLog wraps the ResponseWriter of one request to learn what its
// log line reports: the status and size of the response, the pattern of
// the route that served it and the client it was for.
type requestLog struct {
	httpresp.Recorder
	start time.Time
	// route is the route's pattern, such as "/t/:slug/token" (never the
	// path, which is not secret but whose query may be); "" when no route
	// matched.
	route string
	// ws is the workspace of the request, once known.
	ws *identity.Workspace
	// clientID is the client the request named, and known is whether
	// it is known to be a client of ws (see setClient).
	clientID string
	known    bool
}

// maxLoggedClientID bounds the client id a log line shows.
const maxLoggedClientID = 64

// setClient records the client a request names (the client_id
// parameter, the user of HTTP Basic authentication), if it has the form
// of a client id: 1 to maxLoggedClientID characters, each a letter,
// digit, '.', '_', '~' or '-' (the unreserved characters of RFC 3986,
// which every id the identity package issues is made of). Before it is
// logged, logRequest makes sure it names a client of the workspace:
// what a client sent in its place may be anything, a secret put in the
// wrong field included.
func (l *requestLog) setClient(id string) {
	if l != nil && !l.known && loggableClientID(id) {
		l.clientID = id
	}
}

// clientKnown records the client that authenticated, or that the library
// found for the request: it is logged without a further look.
func (l *requestLog) clientKnown(id string) {
	if l != nil {
		l.clientID, l.known = id, true
	}
}

// client returns the client id to log: the known one, or the one the
// request named when the workspace has that client, else "".
func (l *requestLog) client(ctx context.Context) string {
	switch {
	case l.known:
		return l.clientID
	case l.clientID == "" || l.ws == nil:
		return ""
	}
	if _, err := l.ws.GetClient(ctx, l.clientID); err != nil {
		return ""
	}
	return l.clientID
}

func loggableClientID(id string) bool {
	if id == "" || len(id) > maxLoggedClientID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return false
		}
	}
	return true
}

// routePattern is how the log names the route of an endpoint: the path
// below the handler, the workspace's slug as a parameter, in the notation
// of package httpapi's log ("/t/:slug/api/v1/users").
func routePattern(endpoint string) string { return "/t/:slug/" + endpoint }

// logRequest writes the one log line of a request at level INFO (WARN for
// a 5xx, whose cause the handler has logged at ERROR already): method,
// route pattern, status, duration, bytes and, when known, the client id
// (see setClient).
// It never logs the path or query, headers or bodies, so tokens, codes,
// secrets and passwords stay out of the log.
func (h *Handler) logRequest(r *http.Request, l *requestLog) {
	now := time.Now()
	status := l.Status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	level := slog.LevelInfo
	if status >= http.StatusInternalServerError {
		level = slog.LevelWarn
	}
	ctx, handler := r.Context(), h.logger.Handler()
	if !handler.Enabled(ctx, level) {
		return
	}
	line := slog.NewRecord(now, level, "http request", 0)
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("route", l.route),
		slog.Int("status", status),
		slog.Duration("duration", now.Sub(l.start)),
		slog.Int64("bytes", l.Bytes),
	)
	if id := l.client(ctx); id != "" {
		line.AddAttrs(slog.String("client_id", id))
	}
	_ = handler.Handle(ctx, line) // a log that cannot be written has nowhere to say so
}
