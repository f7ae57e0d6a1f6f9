// Package browsertest starts headless Chromium for the browser tests of
// the hosted pages (package oidc) and of identityd, the one way both do
// it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Required reports whether the browser tests must run: under CI=true a
// missing browser (or test asset) fails them instead of skipping them.
func Required() bool { return os.Getenv("CI") == "true" }

// Chromium returns the path of Debian's chromium. Under CI=true a missing
// browser fails the test; elsewhere the test is skipped with a message.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if Required() {
		t.Fatal("CI=true and no chromium on PATH: .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH (apt-get install chromium): skipping the browser tests")
	return ""
}

// New starts a headless Chromium for the test and returns a tab with the
// pages' JavaScript on or off (the DevTools protocol's own evaluation
// works either way), that ends when the test does or after wait. opts add
// to chromedp's defaults (a window size, say).
func New(t testing.TB, javascript bool, wait time.Duration, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	all := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.NoSandbox, // the CI machine runs tests as root
		chromedp.DisableGPU,
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(all, opts...)...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, wait)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !javascript})
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}
