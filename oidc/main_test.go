package oidc_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the default logger, to which zitadel/oidc's op
// package logs every refused request.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
