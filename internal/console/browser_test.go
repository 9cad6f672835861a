package console_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// One chromium (Debian's package) for the whole test binary, started on
// the first browser test; each test gets a tab in a browser context of its
// own (its own cookies) and a deadline. Without chromium the browser
// tests skip, and fail when TOOLNEXUS_REQUIRE_E2E=1 (CI).

var shared struct {
	once sync.Once
	ctx  context.Context // the browser's
	stop func()
	dir  string
	err  error
}

func init() {
	closeBrowser = func() {
		if shared.stop != nil {
			shared.stop()
			os.RemoveAll(shared.dir)
		}
	}
}

// chromiumPath finds chromium on PATH, or skips the test (fails it when
// TOOLNEXUS_REQUIRE_E2E=1, as CI sets).
func chromiumPath(t testing.TB) string {
	t.Helper()
	return testutil.Installed(t, "chromium", "the browser tests", "chromium", "chromium-browser")
}

func startBrowser(path string) {
	shared.dir, shared.err = os.MkdirTemp("", "toolnexus-chromium-")
	if shared.err != nil {
		return
	}
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(shared.dir), chromedp.WindowSize(1280, 900))
	ctx, stopBrowser := chromedp.NewContext(alloc)
	shared.ctx = ctx
	shared.stop = func() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		stopBrowser()
		stopAlloc()
	}
	shared.err = chromedp.Do(ctx) // starts the browser, for the life of ctx
}

// tab is a test's tab: its own browser context (cookies), a minute to
// finish, and a count of the JavaScript dialogs anything opened in it
// (an injected alert() would be one).
type tab struct {
	t       *testing.T
	ctx     context.Context
	dialogs *atomic.Int32
	base    string
}

func newTab(t *testing.T, base string) *tab {
	t.Helper()
	path := chromiumPath(t)
	shared.once.Do(func() { startBrowser(path) })
	if shared.err != nil {
		t.Fatalf("chromium did not start: %v", shared.err)
	}
	dialogs := new(atomic.Int32)
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}))
	must(t, chromedp.Do(ctx)) // opens the tab without a deadline
	tctx, stop := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		stop()
		cancel()
	})
	return &tab{t: t, ctx: tctx, dialogs: dialogs, base: base}
}

// do runs the steps, failing the test with what it was doing.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (at %s)", what, err, b.location())
	}
}

func (b *tab) location() string {
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	return loc
}

// text is the text of the first element sel matches.
func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v (at %s)", sel, err, b.location())
	}
	return s
}

// count is how many elements sel matches now.
func (b *tab) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int]("document.querySelectorAll("+quote(sel)+").length"))
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// open goes to path and waits for the page's heading.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// login logs in with token through the login form.
func (b *tab) login(token string) {
	b.t.Helper()
	b.open("/login")
	b.do("log in", chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("form[action='/login'] button")),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
}

// shot saves the page as name.png in $TOOLNEXUS_SCREENSHOTS (relative to
// the repository's root), when it is set: the pictures of docs/console.md.
func (b *tab) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("TOOLNEXUS_SCREENSHOTS")
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(testutil.RepoRoot(b.t), dir)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	must(b.t, os.MkdirAll(dir, 0o755))
	must(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// noDialogs fails the test when anything opened a JavaScript dialog.
func (b *tab) noDialogs() {
	b.t.Helper()
	if n := b.dialogs.Load(); n > 0 {
		b.t.Fatalf("%d JavaScript dialogs opened: injected script ran", n)
	}
}

// eventually polls cond every 100 ms for up to d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
