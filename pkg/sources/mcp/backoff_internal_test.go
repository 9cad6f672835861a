package mcp

import (
	"testing"
	"time"
)

func TestBackoffDoublesCapsAndResets(t *testing.T) {
	b := newBackoff(Restart{}) // the defaults: 250 ms doubling to 30 s, reset after 60 s
	var got []time.Duration
	for range 9 {
		got = append(got, b.next())
	}
	ms := time.Millisecond
	want := []time.Duration{250 * ms, 500 * ms, 1000 * ms, 2000 * ms, 4000 * ms, 8000 * ms, 16000 * ms, 30000 * ms, 30000 * ms}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits = %v, want %v", got, want)
		}
	}
	b.wentDown(59 * time.Second) // a crash loop keeps its pace
	if d := b.next(); d != 30*time.Second {
		t.Fatalf("after a short run: %v", d)
	}
	b.wentDown(60 * time.Second) // up long enough: start over
	if d := b.next(); d != 250*ms {
		t.Fatalf("after a long run: %v", d)
	}
}

func TestBackoffTunable(t *testing.T) {
	b := newBackoff(Restart{InitialBackoff: 10, MaxBackoff: 25, ResetAfter: 100})
	if a, c, d := b.next(), b.next(), b.next(); a != 10*time.Millisecond || c != 20*time.Millisecond || d != 25*time.Millisecond {
		t.Fatalf("waits = %v %v %v", a, c, d)
	}
}
