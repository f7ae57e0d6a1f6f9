package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/httpresp"
)

// statusRecorder wraps the ResponseWriter of one request to learn what the
// log line reports: the status and size of the response, the route pattern
// that served it, and the failure behind a 5xx.
type statusRecorder struct {
	httpresp.Recorder
	start time.Time
	// info is what the request says of its client, its id included: the
	// RequestInfo of every library call it makes.
	info  identity.RequestInfo
	route string
	err   error  // the cause of a 5xx, for the log only
	stack string // the stack of a recovered panic
}

// recorderOf returns the statusRecorder that ServeHTTP hands down:
// httprouter passes the same ResponseWriter to routes and to its NotFound,
// MethodNotAllowed and panic handlers.
func recorderOf(w http.ResponseWriter) *statusRecorder {
	if rec, ok := w.(*statusRecorder); ok {
		return rec
	}
	return &statusRecorder{Recorder: httpresp.Recorder{ResponseWriter: w}} // unreachable; keeps callers simple
}

// fail records why the request ended in a server error.
func (rec *statusRecorder) fail(err error) { rec.err = err }

// logRequest writes the one log line of a request: method, route pattern
// (not the path, which may hold ids and keys of attributes), status,
// duration and bytes, and for a server error its cause. It never logs
// headers or bodies, so keys, passwords and secrets stay out of the log.
//
// The record goes straight to the logger's handler, stamped with now and
// without a source position: the position would always be this function,
// which tells an operator nothing, and finding it (runtime.Callers, as
// Logger.LogAttrs does) costs more than the rest of the call.
func (h *handler) logRequest(r *http.Request, rec *statusRecorder, now time.Time, status int, took time.Duration) {
	logger := h.logger
	if logger == nil {
		logger = slog.Default()
	}
	level := slog.LevelInfo
	if status >= http.StatusInternalServerError {
		level = slog.LevelWarn // a 503 for a canceled request: no fault of ours
	}
	if rec.err != nil {
		level = slog.LevelError
	}
	ctx, handler := r.Context(), logger.Handler()
	if !handler.Enabled(ctx, level) {
		return
	}
	line := slog.NewRecord(now, level, "http request", 0)
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("route", rec.route),
		slog.Int("status", status),
		slog.Duration("duration", took),
		slog.Int64("bytes", rec.Bytes),
	)
	if rec.err != nil {
		line.AddAttrs(slog.String("error", causeOf(rec.err)))
	}
	if rec.stack != "" {
		line.AddAttrs(slog.String("stack", rec.stack))
	}
	_ = handler.Handle(ctx, line) // a log that cannot be written has nowhere to say so
}

// causeOf describes err for the log, with the cause an *identity.Error
// keeps out of its message (it is never shown to callers, but an operator
// needs it).
func causeOf(err error) string {
	msg := err.Error()
	if e, ok := errors.AsType[*identity.Error](err); ok && e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}
