package identity

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/identitylib/identity/store"
)

// Throttling defaults and bounds.
const (
	// DefaultAddressFailures is how many failed sign-ins one client address
	// may make in a window, across every account, when
	// ThrottlePolicy.PerAddress is zero: 50 in 15 minutes.
	DefaultAddressFailures = 50
	// DefaultLoginFailures is how many failed sign-ins may name one login
	// (a username or an email address, whether an account has it or not)
	// in a window, from any address, when ThrottlePolicy.PerLogin is zero:
	// 10 in 15 minutes, as many as the default lockout threshold, so that
	// an unknown login is refused like a locked one.
	DefaultLoginFailures = 10
	// DefaultThrottleWindow is the window of both rates when theirs is
	// zero.
	DefaultThrottleWindow = 15 * time.Minute
	// DefaultMailInterval is how long after an email to an address a
	// request for another one reuses it instead, when
	// ThrottlePolicy.MailInterval is zero.
	DefaultMailInterval = 5 * time.Minute
	// MaxThrottleCount bounds Rate.Count.
	MaxThrottleCount = 100000
	// MaxThrottleWindow bounds Rate.Window and ThrottlePolicy.MailInterval.
	MaxThrottleWindow = 24 * time.Hour
)

// Rate is at most Count events in any Window. The zero value means the
// default of the field that holds it.
type Rate struct {
	// Count is 1 to MaxThrottleCount.
	Count int `json:"count,omitempty"`
	// Window is whole seconds, 1 second to MaxThrottleWindow.
	Window time.Duration `json:"window,omitempty"`
}

// or returns r with each zero field taken from def.
func (r Rate) or(def Rate) Rate {
	if r.Count == 0 {
		r.Count = def.Count
	}
	if r.Window == 0 {
		r.Window = def.Window
	}
	return r
}

// validate adds the rate's problems to pr, under field.
func (r Rate) validate(pr *problems, field string) {
	if r.Count < 0 || r.Count > MaxThrottleCount {
		pr.add(field+".count", RuleRange, "must be between 1 and %d (0 for the default)", MaxThrottleCount)
	}
	validWindow(pr, field+".window", r.Window)
}

// validWindow adds a problem to pr unless d is zero or whole seconds
// between 1 second and MaxThrottleWindow.
func validWindow(pr *problems, field string, d time.Duration) {
	if d != 0 && (d < time.Second || d > MaxThrottleWindow || d%time.Second != 0) {
		pr.add(field, RuleRange, "must be whole seconds between 1s and %s (0 for the default)", MaxThrottleWindow)
	}
}

// ThrottlePolicy is a workspace's rule against guessing across accounts
// and against mail floods; the zero value is the default policy: on, 50
// failed sign-ins per client address and 10 per login in 15 minutes, one
// reset or verification email per address in 5 minutes.
//
// A failed sign-in counts under its client address (RequestInfo.Address;
// an IPv6 address counts for its /64, which one client usually holds
// whole) and under the login it named, folded like usernames and
// addresses are; a sign-in that succeeds counts under neither. Once
// either count is full, Authenticate refuses with CodeRateLimited and
// Error.RetryAfter, before looking at the password, until the oldest
// failure leaves the window. A password reset through an emailed link
// clears the counts of the user's username and address.
//
// The counts live in the Service's Limiter (Options.Limiter): by default
// in the process's memory, exact within one process; several processes
// over one database each keep their own, so a client may make up to the
// limit in each of them (the lockout policy's count, kept in the store,
// is exact across them).
type ThrottlePolicy struct {
	// Disabled turns throttling off for the workspace, mail throttling
	// included. Default false: on.
	Disabled bool `json:"disabled,omitempty"`
	// PerAddress bounds the failed sign-ins of one client address.
	PerAddress Rate `json:"perAddress,omitzero"`
	// PerLogin bounds the failed sign-ins naming one login.
	PerLogin Rate `json:"perLogin,omitzero"`
	// MailInterval is how long after a password reset or verification
	// email to an address a request for another of the same kind is
	// answered by the first one, whose link still works: whole seconds,
	// 1 second to MaxThrottleWindow; 0 means DefaultMailInterval.
	MailInterval time.Duration `json:"mailInterval,omitempty"`
}

func (p ThrottlePolicy) perAddress() Rate {
	return p.PerAddress.or(Rate{Count: DefaultAddressFailures, Window: DefaultThrottleWindow})
}

func (p ThrottlePolicy) perLogin() Rate {
	return p.PerLogin.or(Rate{Count: DefaultLoginFailures, Window: DefaultThrottleWindow})
}

func (p ThrottlePolicy) mailInterval() time.Duration {
	if p.MailInterval == 0 {
		return DefaultMailInterval
	}
	return p.MailInterval
}

// validate adds the policy's problems to pr.
func (p ThrottlePolicy) validate(pr *problems) {
	p.PerAddress.validate(pr, "throttle.perAddress")
	p.PerLogin.validate(pr, "throttle.perLogin")
	validWindow(pr, "throttle.mailInterval", p.MailInterval)
}

// Limiter counts events under keys, for throttling (Options.Limiter). The
// library's keys name the workspace and what is counted; a Limiter need
// not understand them. It must be safe for concurrent use. An embedding
// program supplies its own to share counts between processes (in Redis,
// say) or to count differently.
type Limiter interface {
	// Take counts one event under key if fewer than rate.Count were
	// counted under it in the last rate.Window, and returns a function
	// that takes the event back (for an attempt that turned out not to
	// count, such as a sign-in that succeeded). Otherwise it counts
	// nothing and returns how long until one more would be allowed (more
	// than zero). A Limiter that fails returns an error: the call that
	// asked fails with it, rather than go on uncounted.
	Take(ctx context.Context, key string, rate Rate) (undo func(), retryAfter time.Duration, err error)
	// Reset forgets every event counted under key.
	Reset(ctx context.Context, key string) error
}

// errRateLimited is the error of a call refused by the throttle.
func errRateLimited(retryAfter time.Duration) error {
	return &Error{Code: CodeRateLimited, RetryAfter: retryAfter,
		Message: "too many attempts: try again in " + plural(minutesUp(retryAfter), "minute")}
}

// minutesUp is d in whole minutes, rounded up.
func minutesUp(d time.Duration) int { return int((d + time.Minute - 1) / time.Minute) }

// plural returns "1 minute", "5 minutes".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// Throttle keys: the workspace, what is counted, and its value.
func addressKey(slug string, addr netip.Addr) string {
	return "addr\x00" + slug + "\x00" + addressBucket(addr).String()
}

func loginKey(slug, login string) string {
	return "login\x00" + slug + "\x00" + store.Fold(login)
}

func mailKey(slug string, kind MailKind, email string) string {
	return "mail\x00" + slug + "\x00" + string(kind) + "\x00" + store.Fold(email)
}

// addressBucket is what an address counts as: an IPv4 address itself, an
// IPv6 address its /64.
func addressBucket(addr netip.Addr) netip.Prefix {
	if addr.Is4() {
		return netip.PrefixFrom(addr, 32)
	}
	p, _ := addr.Prefix(64)
	return p
}

// throttled is the pair of counts a sign-in took, to give back if it
// succeeds.
type throttled []func()

// undo gives every count back.
func (t throttled) undo() {
	for _, u := range t {
		u()
	}
}

// takeSignIn counts a sign-in attempt under its client address (when the
// context says it) and its login, under the workspace's policy. A full
// count refuses with CodeRateLimited, taking nothing.
func (w *Workspace) takeSignIn(ctx context.Context, policy ThrottlePolicy, login string) (throttled, error) {
	return w.takeSignInCounts(ctx, policy, login, true)
}

// takeSignInCounts is takeSignIn, which counts under the login only when
// byLogin is set: a passkey sign-in whose credential names no user has
// no login to count under.
func (w *Workspace) takeSignInCounts(ctx context.Context, policy ThrottlePolicy, login string, byLogin bool) (throttled, error) {
	if policy.Disabled {
		return nil, nil
	}
	type count struct {
		key  string
		rate Rate
	}
	var counts []count
	if byLogin {
		counts = append(counts, count{loginKey(w.slug, login), policy.perLogin()})
	}
	if addr := RequestInfoFrom(ctx).Address; addr.IsValid() {
		counts = append(counts, count{addressKey(w.slug, addr), policy.perAddress()})
	}
	var taken throttled
	for _, c := range counts {
		undo, retry, err := w.svc.limiter.Take(ctx, c.key, c.rate)
		if err == nil && retry > 0 {
			err = errRateLimited(retry)
		}
		if err != nil {
			taken.undo()
			return nil, err
		}
		taken = append(taken, undo)
	}
	return taken, nil
}

// takeMail reports whether an email of the kind to the address may be
// queued now under the workspace's policy, counting it if so; otherwise
// how long until one may.
func (w *Workspace) takeMail(ctx context.Context, policy ThrottlePolicy, kind MailKind, email string) (time.Duration, error) {
	if policy.Disabled {
		return 0, nil
	}
	_, retry, err := w.svc.limiter.Take(ctx, mailKey(w.slug, kind, email), Rate{Count: 1, Window: policy.mailInterval()})
	return retry, err
}

// forgetSignInFailures clears the sign-in counts of logins (not of
// addresses: one address may be many people's).
func (w *Workspace) forgetSignInFailures(ctx context.Context, logins ...string) {
	for _, login := range logins {
		if login != "" {
			// The reset has succeeded: a count left behind only means the
			// user waits as if it had not.
			_ = w.svc.limiter.Reset(ctx, loginKey(w.slug, login))
		}
	}
}

// maxLimiterKeys bounds the keys the in-memory limiter holds: about 100
// bytes each plus 24 per event counted.
const maxLimiterKeys = 200000

// memoryLimiter is the default Limiter: exact sliding windows, in this
// process's memory, on the Service's clock.
type memoryLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	// keys holds, for every key, the events counted in its window, oldest
	// first, and that window.
	keys map[string]*limiterKey
	// nextSweep is when full keys are looked through for expired ones.
	nextSweep time.Time
	// lastID is the id of the last event counted.
	lastID uint64
}

type limiterKey struct {
	window time.Duration
	events []limiterEvent
}

// limiterEvent is one counted event; id tells it apart from events at the
// same time, so that undo takes back its own.
type limiterEvent struct {
	at time.Time
	id uint64
}

func newMemoryLimiter(now func() time.Time) *memoryLimiter {
	return &memoryLimiter{now: now, keys: make(map[string]*limiterKey)}
}

// Take implements Limiter.
func (l *memoryLimiter) Take(_ context.Context, key string, rate Rate) (func(), time.Duration, error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[key]
	if k == nil {
		if len(l.keys) >= maxLimiterKeys && !l.sweep(now) {
			// Full of live keys: this one goes uncounted rather than
			// push out the counts of the keys under attack.
			return func() {}, 0, nil
		}
		k = &limiterKey{}
		l.keys[key] = k
	}
	k.window = rate.Window
	k.drop(now)
	if len(k.events) >= rate.Count {
		return nil, k.events[len(k.events)-rate.Count].at.Add(rate.Window).Sub(now), nil
	}
	l.lastID++
	ev := limiterEvent{at: now, id: l.lastID}
	k.events = append(k.events, ev)
	return func() { l.undo(key, ev) }, 0, nil
}

// undo takes the event back, if it is still counted.
func (l *memoryLimiter) undo(key string, ev limiterEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[key]
	if k == nil {
		return
	}
	for i, e := range k.events {
		if e == ev {
			k.events = append(k.events[:i], k.events[i+1:]...)
			break
		}
	}
	if len(k.events) == 0 {
		delete(l.keys, key)
	}
}

// Reset implements Limiter.
func (l *memoryLimiter) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, key)
	return nil
}

// drop forgets the events that left the window at now.
func (k *limiterKey) drop(now time.Time) {
	i := 0
	for i < len(k.events) && !now.Before(k.events[i].at.Add(k.window)) {
		i++
	}
	k.events = k.events[i:]
}

// sweep forgets every key whose events all left their window, at most
// once a second, and reports whether room was made.
func (l *memoryLimiter) sweep(now time.Time) bool {
	if now.Before(l.nextSweep) {
		return false
	}
	l.nextSweep = now.Add(time.Second)
	for key, k := range l.keys {
		if k.drop(now); len(k.events) == 0 {
			delete(l.keys, key)
		}
	}
	return len(l.keys) < maxLimiterKeys
}
