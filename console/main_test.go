package console_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the default logger, to which zitadel/oidc's op
// package logs its routes and every refused request.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}
