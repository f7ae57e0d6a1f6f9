package metrics

import (
	"net/http"
	"time"
)

// Instrument returns h counted in identity_http_requests_total and
// identity_http_request_duration_seconds under the fixed route name
// route, for the handlers beside the REST API (an OpenID Provider's pages,
// a health check): a small fixed set of names, never a path. The REST
// API reports its own routes (httpapi.Options.Observer); do not wrap it
// too. On a nil *Metrics it returns h as it is.
func (m *Metrics) Instrument(route string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK // nothing written: net/http sends 200
			}
			m.RequestDone(r.Method, route, status, time.Since(start))
		}()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int // 0 until the header is written
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 { // 1xx are interim
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, for handlers that stream.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
