package console

import (
	"embed"
)

//go:embed static/console.css static/console.js
var staticFS embed.FS

// staticTypes are the console's static files and their content types.
var staticTypes = map[string]string{
	"console.css": "text/css; charset=utf-8",
	"console.js":  "text/javascript; charset=utf-8",
}

// serveStatic serves the style sheet and the one script, same-origin
// (the CSP allows scripts and styles from 'self' only).
func (h *Handler) serveStatic(rq *request) error {
	name := rq.r.PathValue("file")
	typ, ok := staticTypes[name]
	if !ok {
		return errNotFound
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", typ)
	rq.w.Header().Set("Cache-Control", "no-cache")
	rq.w.Write(b)
	return nil
}
