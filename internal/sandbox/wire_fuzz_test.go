package sandbox

import (
	"reflect"
	"testing"
)

// FuzzDecodeStart feeds the helper's decoder what a broken or hostile
// peer could send: it never panics, never allocates beyond the frame
// (strs checks counts against the bytes left), and whatever it accepts
// encodes back to the same request.
func FuzzDecodeStart(f *testing.F) {
	ok := startRequest{id: 7, flags: reqSeccomp | reqView, unshare: 1, nfiles: 3, pgid: 0, path: "/bin/sh",
		dir: "/w", argv: []string{"sh", "-c", "true"}, env: []string{"A=b"}, view: []viewOp{{viewCoverIfExists, "/s"}, {viewBindFD, "/s/p/i"}}}
	f.Add(ok.encode())
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeStart(b)
		if err != nil {
			return
		}
		again, err := decodeStart(r.encode())
		if err != nil || !reflect.DeepEqual(normalize(r), normalize(again)) {
			t.Fatalf("round trip: %+v → %+v (%v)", r, again, err)
		}
	})
}

// normalize makes empty and nil slices alike for the comparison.
func normalize(r *startRequest) startRequest {
	c := *r
	for _, s := range []*[]string{&c.argv, &c.env} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	if len(c.view) == 0 {
		c.view = nil
	}
	return c
}
