package httpresp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRecorder: the first status counts, a body alone means 200, bytes
// add up, and the writer underneath gets everything.
func TestRecorder(t *testing.T) {
	tests := []struct {
		name       string
		write      func(w http.ResponseWriter)
		wantStatus int
		wantBytes  int64
		wantBody   string
	}{
		{"nothing", func(http.ResponseWriter) {}, 0, 0, ""},
		{"a body alone", func(w http.ResponseWriter) { w.Write([]byte("hello")) }, 200, 5, "hello"},
		{"a status and bodies", func(w http.ResponseWriter) {
			w.WriteHeader(404)
			w.Write([]byte("not "))
			w.Write([]byte("found"))
		}, 404, 9, "not found"},
		{"the first status counts", func(w http.ResponseWriter) {
			w.WriteHeader(503)
			w.WriteHeader(200)
		}, 503, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			under := httptest.NewRecorder()
			r := &Recorder{ResponseWriter: under}
			tt.write(r)
			if r.Status != tt.wantStatus || r.Bytes != tt.wantBytes || under.Body.String() != tt.wantBody {
				t.Errorf("Status %d, Bytes %d, body %q; want %d, %d, %q", r.Status, r.Bytes, under.Body.String(), tt.wantStatus, tt.wantBytes, tt.wantBody)
			}
			if r.Unwrap() != under {
				t.Error("Unwrap does not return the writer underneath")
			}
		})
	}
}
