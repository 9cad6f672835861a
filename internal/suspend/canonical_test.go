package suspend_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/suspendtest"
)

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `{}`},
		{`{ "b" : 1, "a" : [ 1.0, 1e3, "x" ] }`, `{"a":[1.0,1e3,"x"],"b":1}`},
		{`{"s":"<&>","u":"\u00e9"}`, `{"s":"<&>","u":"é"}`},
		{`{"n":null,"t":true,"f":false,"o":{"z":1,"y":{}}}`, `{"f":false,"n":null,"o":{"y":{},"z":1},"t":true}`},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := suspend.Canonical(json.RawMessage(c.in))
			if err != nil || string(got) != c.want {
				t.Fatalf("Canonical(%s) = %s, %v; want %s", c.in, got, err, c.want)
			}
		})
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{`, `{"a":1} x`} {
		t.Run("refuses "+bad, func(t *testing.T) {
			if _, err := suspend.Digest(json.RawMessage(bad)); err == nil {
				t.Fatalf("Digest(%s) accepted", bad)
			}
		})
	}
}

// FuzzDigestKeyOrder: the digest of any JSON document is the digest of the
// same document with every object's keys in reverse order and different
// whitespace, and canonical form is a fixed point.
func FuzzDigestKeyOrder(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":2}`, `{"command":"rm -rf /","cwd":"/tmp"}`, `{"x":{"b":[1,{"d":1,"c":2}],"a":null}}`,
		`{"n":1.50,"e":-1E+3,"s":"\u2028<>"}`, `[3,2,1]`, `"s"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, err := suspend.Digest(in)
		if err != nil || len(bytes.TrimSpace(in)) == 0 {
			return // refused, or no arguments (which digest as {})
		}
		re, err := suspendtest.Reordered(in)
		if err != nil {
			t.Fatalf("Digest accepted what does not decode: %v", err)
		}
		if got, err := suspend.Digest(re); err != nil || got != want {
			t.Fatalf("reordered %s: digest %s, %v; want %s", re, got, err, want)
		}
		canon, _ := suspend.Canonical(in)
		again, err := suspend.Canonical(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("Canonical not a fixed point: %s then %s (%v)", canon, again, err)
		}
	})
}
