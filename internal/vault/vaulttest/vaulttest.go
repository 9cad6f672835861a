// Package vaulttest is the contract every vault.Backend passes: run it
// from the backend's own tests with a constructor of an empty store.
package vaulttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/vault"
)

// Run runs the contract: open returns two handles onto one fresh, empty
// store (two clients of one Redis; the same value twice for a store only
// one process owns), each closed by the test's cleanup.
func Run(t *testing.T, open func(t *testing.T) (a, b vault.Backend)) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, vault.Backend, vault.Backend)
	}{
		{"PutGetDelete", putGetDelete},
		{"SealedRecordsRoundTrip", sealed},
		{"TakeOnce", takeOnce},
		{"ConcurrentTakesOneWins", concurrentTakes},
		{"Expiry", expiryContract},
		{"KeysByPrefix", keysByPrefix},
		{"LockExclusive", lockExclusive},
		{"LockExpires", lockExpires},
		{"WatchSeesChanges", watch},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := open(t)
			c.run(t, a, b)
		})
	}
}

var bg = context.Background()

func putGetDelete(t *testing.T, a, b vault.Backend) {
	if _, err := a.Get(bg, "conn/x"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("Get of nothing: %v, want ErrNotFound", err)
	}
	if err := a.Put(bg, "conn/x", []byte("one"), 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(bg, "conn/x", []byte("two"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(bg, "conn/x"); err != nil || string(got) != "two" {
		t.Fatalf("the other handle reads %q, %v; want the last write", got, err)
	}
	if ok, err := b.Delete(bg, "conn/x"); !ok || err != nil {
		t.Fatalf("Delete: %v %v", ok, err)
	}
	if ok, err := a.Delete(bg, "conn/x"); ok || err != nil {
		t.Fatalf("second Delete: %v %v, want false", ok, err)
	}
	if _, err := a.Get(bg, "conn/x"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
}

// Through a Vault: what one handle seals the other opens, and a record
// copied under another name does not open.
func sealed(t *testing.T, a, b vault.Backend) {
	keys := vault.RandomKeys()
	va, _ := vault.New(a, keys)
	vb, _ := vault.New(b, keys)
	if err := va.Put(bg, "conn/s/alice", []byte("alice's tokens"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := vb.Get(bg, "conn/s/alice"); err != nil || string(got) != "alice's tokens" {
		t.Fatalf("open: %q %v", got, err)
	}
	raw, _ := a.Get(bg, "conn/s/alice")
	if err := a.Put(bg, "conn/s/mallory", raw, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := vb.Get(bg, "conn/s/mallory"); err == nil {
		t.Fatal("a record moved to another name opened")
	}
}

func takeOnce(t *testing.T, a, b vault.Backend) {
	if err := a.Put(bg, "flow/1", []byte("state"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Take(bg, "flow/1"); err != nil || string(got) != "state" {
		t.Fatalf("Take: %q %v", got, err)
	}
	if _, err := a.Take(bg, "flow/1"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("second Take: %v, want ErrNotFound", err)
	}
	if _, err := a.Get(bg, "flow/1"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("Get after Take: %v", err)
	}
}

func concurrentTakes(t *testing.T, a, b vault.Backend) {
	for round := range 20 {
		key := fmt.Sprintf("flow/%d", round)
		if err := a.Put(bg, key, []byte("x"), time.Minute); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			h := a
			if i%2 == 1 {
				h = b
			}
			wg.Go(func() {
				if _, err := h.Take(bg, key); err == nil {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d takers got the record, want exactly 1", round, wins.Load())
		}
	}
}

func expiryContract(t *testing.T, a, b vault.Backend) {
	if err := a.Put(bg, "flow/short", []byte("x"), 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(bg, "conn/long", []byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(bg, "flow/short"); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := b.Get(bg, "flow/short"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("after expiry Get: %v", err)
	}
	if _, err := b.Take(bg, "flow/short"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("after expiry Take: %v", err)
	}
	if keys, _ := b.Keys(bg, ""); !slices.Equal(keys, []string{"conn/long"}) {
		t.Fatalf("Keys after expiry: %v", keys)
	}
}

func keysByPrefix(t *testing.T, a, b vault.Backend) {
	for _, k := range []string{"conn/gh/alice", "conn/gh/bob", "conn/jira/alice", "client/gh"} {
		if err := a.Put(bg, k, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Keys(bg, "conn/gh/")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"conn/gh/alice", "conn/gh/bob"}) {
		t.Fatalf("Keys(conn/gh/) = %v, %v", got, err)
	}
	if _, err := b.Delete(bg, "conn/gh/bob"); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Keys(bg, "conn/"); len(got) != 2 {
		t.Fatalf("Keys(conn/) after a delete = %v", got)
	}
}

func lockExclusive(t *testing.T, a, b vault.Backend) {
	unlock, err := a.Lock(bg, "refresh/x", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(bg, "refresh/x", time.Minute); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	if u, err := b.Lock(bg, "refresh/y", time.Minute); err != nil {
		t.Fatalf("another name: %v", err)
	} else {
		u()
	}
	unlock()
	unlock2, err := b.Lock(bg, "refresh/x", time.Minute)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock() // a stale unlock must not release the new holder's lock
	if _, err := a.Lock(bg, "refresh/x", time.Minute); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("a stale unlock released another holder's lock: %v", err)
	}
	unlock2()
}

func lockExpires(t *testing.T, a, b vault.Backend) {
	if _, err := a.Lock(bg, "refresh/dead", 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	u, err := b.Lock(bg, "refresh/dead", time.Minute)
	if err != nil {
		t.Fatalf("a lock whose holder died is still held: %v", err)
	}
	u()
}

func watch(t *testing.T, a, b vault.Backend) {
	seen := make(chan string, 16)
	stop := b.Watch(func(k string) { seen <- k })
	defer stop()
	want := func(key string) {
		t.Helper()
		select {
		case k := <-seen:
			if k != key {
				t.Fatalf("watched %q, want %q", k, key)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no change seen for %q", key)
		}
	}
	_ = a.Put(bg, "conn/w", []byte("x"), 0)
	want("conn/w")
	_, _ = a.Delete(bg, "conn/w")
	want("conn/w")
	_ = a.Put(bg, "flow/w", []byte("x"), time.Minute)
	want("flow/w")
	_, _ = a.Take(bg, "flow/w")
	want("flow/w")
	stop()
	_ = a.Put(bg, "conn/after", []byte("x"), 0)
	select {
	case k := <-seen:
		t.Fatalf("a stopped watcher saw %q", k)
	case <-time.After(100 * time.Millisecond):
	}
}
