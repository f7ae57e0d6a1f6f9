// Package browsertest starts headless Chromium for the browser tests of
// the hosted pages (package oidc) and of identityd, the one way both do
// it.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
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

// axePath is where .ci/run installs axe-core from npm, relative to the
// root of the module; IDENTITY_TEST_AXE names another axe.min.js.
const axePath = ".ci/test-assets/node_modules/axe-core/axe.min.js"

// AxeSource returns axe-core's script, read from root (the module's root,
// relative to the test's package: ".." or "../.."); without it the test
// fails under CI=true and is skipped elsewhere.
func AxeSource(t testing.TB, root string) string {
	t.Helper()
	path := os.Getenv("IDENTITY_TEST_AXE")
	if path == "" {
		path = filepath.Join(root, axePath)
	}
	src, err := os.ReadFile(path)
	switch {
	case err == nil:
		return string(src)
	case Required():
		t.Fatalf("CI=true and no axe-core at %s (.ci/run installs it from npm): %v", path, err)
	default:
		t.Skipf("no axe-core at %s (run .ci/run, or npm install axe-core there): skipping the accessibility check", path)
	}
	return ""
}

// axeCheck is the script that runs axe-core over the page (WCAG 2.x A and
// AA rules and best practices) and returns its serious and critical
// violations, each as "rule: selectors".
const axeCheck = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
	.filter(v => v.impact === "serious" || v.impact === "critical")
	.map(v => v.id + " (" + v.impact + "): " + v.nodes.map(n => n.target.join(" ")).join(", ")))`

// RunAxe injects axe-core into the page through the DevTools protocol
// (the page's CSP does not apply to it) and returns its serious and
// critical violations. axe-core waits on timers, which do not run while
// scripts are off: on a page loaded with JavaScript off they are turned
// on for the check only, which changes nothing of the page (no script of
// the page runs after it has loaded), and off again.
func RunAxe(ctx context.Context, axe string, javascript bool) ([]string, error) {
	scripts := func(on bool) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}
	if !javascript {
		if err := scripts(true); err != nil {
			return nil, err
		}
		defer scripts(false)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+"\n;true")); err != nil {
		return nil, fmt.Errorf("injecting: %w", err)
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return chromedp.Run(actx, chromedp.Evaluate[[]string](axeCheck, func(p *runtime.EvaluateParams) { p.AwaitPromise = new(true) }))
}
