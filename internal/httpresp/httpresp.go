// Package httpresp holds what the HTTP adapters (httpapi and oidc) share
// about the responses they log.
package httpresp

import "net/http"

// Recorder wraps the ResponseWriter of one request to learn the status and
// the size of its response, for the access log.
type Recorder struct {
	http.ResponseWriter
	// Status is the first status written; 0 until the header is written.
	Status int
	// Bytes counts the body bytes written.
	Bytes int64
}

// WriteHeader records the first status written.
func (r *Recorder) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

// Write counts the body bytes; a body without WriteHeader means 200.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.Bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
