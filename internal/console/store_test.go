package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/redisvault"
	"github.com/toolnexus/toolnexus/internal/web"
)

// With cluster.redis the sessions live in Redis (the vault's Redis
// backend, sealed with the replicas' shared key): a login made on one
// replica works on the other, and a logout on either ends it on both.
// The records hold neither the cookie nor a token.
func TestSessionsAcrossReplicasInRedis(t *testing.T) {
	srv := testutil.StartRedis(t)
	keys := vault.RandomKeys()
	replica := func() *rig {
		cfg, err := config.Parse([]byte(`{"cluster": {"redis": {"url": "`+srv.URL+`", "keyPrefix": "console-test:"}}}`), "", t.TempDir())
		must(t, err)
		cl, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		must(t, err)
		b := redisvault.New(cl)
		t.Cleanup(func() {
			b.Close()
			cl.Close()
		})
		v, err := vault.New(b, keys)
		must(t, err)
		return startRig(t, rigOptions{store: v})
	}
	a, b := replica(), replica()
	pa := loggedIn(t, a, leadToken)
	sid := pa.cookie("toolnexus-session")
	pb := newPerson(t, b)
	u, _ := url.Parse(b.URL)
	pb.c.Jar.SetCookies(u, []*http.Cookie{{Name: "toolnexus-session", Value: sid, Path: "/"}})
	if resp, body := pb.get("/sessions"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Logged in as <strong>lead</strong>") {
		t.Fatalf("the session made on replica 1, on replica 2: %s", resp.Status)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	stored, err := rdb.Keys(t.Context(), "console-test:*").Result()
	must(t, err)
	sessions := 0
	for _, k := range stored {
		v, _ := rdb.Get(t.Context(), k).Result() // the index set answers WRONGTYPE: nothing to read
		if strings.Contains(v, sid) || strings.Contains(v, leadToken) || strings.Contains(k, sid) || strings.Contains(v, "lead") {
			t.Fatalf("Redis holds the cookie, the token or the name in the clear under %s", k)
		}
		if strings.Contains(k, "console/session/") {
			sessions++
		}
	}
	if sessions != 1 {
		t.Fatalf("%d sessions in Redis (keys %v)", sessions, stored)
	}
	if resp, _ := pb.post("/logout", url.Values{"csrf": {pb.csrf("/tools")}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("logout on replica 2: %s", resp.Status)
	}
	if resp, _ := pa.get("/tools"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the session still works on replica 1 after the logout on 2: %s", resp.Status)
	}
}

// Under HTTPS (a TLS listener, or an https server.web.publicUrl) the
// console's cookies are Secure and __Host- prefixed, so neither a plain
// HTTP page nor a sibling subdomain can read, set or shadow them.
func TestCookiesUnderHTTPS(t *testing.T) {
	r := startRig(t, rigOptions{})
	v, err := vault.New(vault.NewMemory(), vault.RandomKeys())
	must(t, err)
	const base = "https://tools.example.com"
	c := console.New(console.Options{Core: r.core, Store: v, BaseURL: func() string { return base }, Logger: quiet()})
	w := web.New(web.Options{Addr: "127.0.0.1:0", PublicURL: base})
	c.Mount(w)
	h := w.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"/login", nil))
	loginCk := rec.Result().Cookies()[0]
	if loginCk.Name != "__Host-toolnexus-login" || !loginCk.Secure {
		t.Fatalf("login cookie %+v", loginCk)
	}
	csrf := csrfField.FindStringSubmatch(rec.Body.String())[1]
	req := httptest.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{"csrf": {csrf}, "token": {leadToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.AddCookie(loginCk)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	var session *http.Cookie
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == "__Host-toolnexus-session" {
			session = ck
		}
	}
	if session == nil || !session.Secure || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" || session.Domain != "" {
		t.Fatalf("session cookie %+v", session)
	}
	if rec.Header().Get("Strict-Transport-Security") == "" {
		t.Fatal("no HSTS under HTTPS")
	}
}

// expiringStore is the console's store that remembers the sessions it was
// given, so a test can move their end into the past.
type expiringStore struct {
	console.Store
	mu       sync.Mutex
	sessions map[string]time.Duration // key → the TTL it was put with
}

func (s *expiringStore) Put(ctx context.Context, key string, plaintext []byte, ttl time.Duration) error {
	if strings.Contains(key, "session/") {
		s.mu.Lock()
		s.sessions[key] = ttl
		s.mu.Unlock()
	}
	return s.Store.Put(ctx, key, plaintext, ttl)
}

// expire rewrites every stored session as if it ended a second ago.
func (s *expiringStore) expire(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, ttl := range s.sessions {
		b, err := s.Store.Get(t.Context(), key)
		must(t, err)
		var rec map[string]any
		must(t, json.Unmarshal(b, &rec))
		rec["expires"] = time.Now().Add(-time.Second)
		b, err = json.Marshal(rec)
		must(t, err)
		must(t, s.Store.Put(t.Context(), key, b, ttl))
	}
}

// A login lasts server.web.sessionTimeout (8 hours by default): the
// cookie and the stored record say so, and past its end the session is
// refused even while the store still holds it.
func TestSessionExpires(t *testing.T) {
	v, err := vault.New(vault.NewMemory(), vault.RandomKeys())
	must(t, err)
	store := &expiringStore{Store: v, sessions: map[string]time.Duration{}}
	r := startRig(t, rigOptions{store: store})
	p := newPerson(t, r)
	resp := p.login(leadToken)
	var maxAge int
	for _, ck := range resp.Cookies() {
		if ck.Name == "toolnexus-session" {
			maxAge = ck.MaxAge
		}
	}
	if maxAge != int(config.DefaultConsoleSession/time.Second) {
		t.Fatalf("the session cookie lasts %d s, want %v", maxAge, config.DefaultConsoleSession)
	}
	if len(store.sessions) != 1 {
		t.Fatalf("%d sessions stored", len(store.sessions))
	}
	for _, ttl := range store.sessions {
		if ttl != config.DefaultConsoleSession {
			t.Fatalf("the session record is kept %v, want %v", ttl, config.DefaultConsoleSession)
		}
	}
	if resp, _ := p.get("/tools"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a fresh session: %s", resp.Status)
	}
	store.expire(t)
	if resp, _ := p.get("/tools"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/login") {
		t.Fatalf("an expired session: %s %s", resp.Status, resp.Header.Get("Location"))
	}
}
