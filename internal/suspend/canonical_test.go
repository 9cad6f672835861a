package suspend_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/toolnexus/toolnexus/internal/suspend"
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
		d := json.NewDecoder(bytes.NewReader(in))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("Digest accepted what does not decode: %v", err)
		}
		var buf bytes.Buffer
		reversed(&buf, v)
		if got, err := suspend.Digest(buf.Bytes()); err != nil || got != want {
			t.Fatalf("reordered %s: digest %s, %v; want %s", buf.Bytes(), got, err, want)
		}
		canon, _ := suspend.Canonical(in)
		again, err := suspend.Canonical(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("Canonical not a fixed point: %s then %s (%v)", canon, again, err)
		}
	})
}

// reversed writes v with every object's keys in reverse sorted order and
// spaces between tokens.
func reversed(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			reversed(buf, x[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(" , ")
			}
			reversed(buf, e)
		}
		buf.WriteString(" ]")
	case json.Number:
		buf.WriteString(string(x))
	default:
		b, err := json.Marshal(x)
		if err != nil {
			panic(fmt.Sprint(err))
		}
		buf.Write(b)
	}
}
