package httpapi_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestLogging: one line per request, naming the route pattern (not the
// path) and the status; keys, passwords and secrets never appear.
func TestLogging(t *testing.T) {
	e := newTestEnv(t)
	const password = "Tr0ub4dor&3-very-secret"
	requests := []struct {
		method, path, key string
		body              any
		route, status     string
	}{
		{"POST", base + "/users", e.allKey, map[string]any{"username": "ada", "email": "ada@example.com", "fullName": "Ada", "password": password}, "/t/:slug/api/v1/users", "201"},
		{"GET", base + "/users/1", e.allKey, nil, "/t/:slug/api/v1/users/:userId", "200"},
		{"GET", base + "/users/1", e.keys["webhooks:read"], nil, "/t/:slug/api/v1/users/:userId", "403"},
		{"PUT", base + "/users/1/attributes/secret-key-name", e.allKey, map[string]any{"value": "attribute-secret-value"}, "/t/:slug/api/v1/users/:userId/attributes/:key", "204"},
		{"POST", base + "/webhooks", e.allKey, map[string]any{"url": "https://h.example.com", "events": []string{"user.created"}}, "/t/:slug/api/v1/webhooks", "201"},
		{"GET", base + "/users", "idk_0123456789abcdef_" + strings.Repeat("A", 43), nil, "/t/:slug/api/v1/users", "401"},
		{"GET", base + "/openapi.yaml", "", nil, "/t/:slug/api/v1/openapi.yaml", "200"},
		{"GET", base + "/nosuch", e.allKey, nil, `""`, "404"},
		{"PATCH", base + "/users", e.allKey, nil, `""`, "405"},
	}
	var secrets []string
	for i, r := range requests {
		e.logs.Reset()
		rec := e.do(t, r.method, r.path, r.key, r.body)
		if strings.Contains(r.path, "/webhooks") && rec.Code == 201 {
			secrets = append(secrets, extractSecret(t, rec.Body.String()))
		}
		lines := logLines(e.logs)
		if len(lines) != 1 {
			t.Fatalf("request %d: %d log lines, want 1:\n%s", i, len(lines), e.logs.String())
		}
		for _, want := range []string{
			"level=INFO", "method=" + r.method, "route=" + r.route, "status=" + r.status, "duration=", "bytes=" + strconv.Itoa(rec.Body.Len()),
		} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("request %d: log line lacks %q: %s", i, want, lines[0])
			}
		}
		for _, never := range append([]string{e.allKey, password, "attribute-secret-value", "secret-key-name", "ada@example.com"}, secrets...) {
			if strings.Contains(lines[0], never) {
				t.Errorf("request %d: log line holds %q: %s", i, never, lines[0])
			}
		}
	}
}

func extractSecret(t *testing.T, body string) string {
	t.Helper()
	_, after, ok := strings.Cut(body, `"secret":"`)
	secret, _, ok2 := strings.Cut(after, `"`)
	if !ok || !ok2 || secret == "" {
		t.Fatalf("no secret in %s", body)
	}
	return secret
}
