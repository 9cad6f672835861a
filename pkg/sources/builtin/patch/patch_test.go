package patch_test

import (
	"reflect"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/patch"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		ops  []patch.FileOp
		err  string
	}{
		{"add", "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch",
			[]patch.FileOp{{Kind: patch.OpAdd, Path: "a.txt", Content: "one\ntwo"}}, ""},
		{"update with hunks", "*** Begin Patch\n*** Update File: b.txt\n@@\n a\n-b\n+B\n@@ second\n-d\n+D\n*** End Patch\n",
			[]patch.FileOp{{Kind: patch.OpUpdate, Path: "b.txt", Hunks: []patch.Hunk{{Old: "a\nb", New: "a\nB"}, {Old: "d", New: "D"}}}}, ""},
		{"update without @@", "*** Begin Patch\n*** Update File: b.txt\n-x\n+y\n*** End of File\n*** End Patch",
			[]patch.FileOp{{Kind: patch.OpUpdate, Path: "b.txt", Hunks: []patch.Hunk{{Old: "x", New: "y"}}}}, ""},
		{"delete, CRLF and blank lines", "\r\n*** Begin Patch\r\n\r\n*** Delete File: c.txt\r\n\r\n*** End Patch\r\n",
			[]patch.FileOp{{Kind: patch.OpDelete, Path: "c.txt"}}, ""},
		{"missing begin", "*** Add File: a\n+x\n*** End Patch", nil, "missing '*** Begin Patch'"},
		{"empty", "", nil, "missing '*** Begin Patch'"},
		{"missing end", "*** Begin Patch\n*** Add File: a\n+x\n", nil, "missing '*** End Patch'"},
		{"unexpected line", "*** Begin Patch\nhello\n*** End Patch", nil, "unexpected line: hello"},
		{"header without path", "*** Begin Patch\n*** Add File: \n*** End Patch", nil, "unexpected line: *** Add File: "},
		{"body after delete", "*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch", nil, "unexpected line: -x"},
		{"no operations", "*** Begin Patch\n*** End Patch", nil, "the patch has no file operations"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := patch.Parse(tc.text)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ops, tc.ops) {
				t.Errorf("ops = %+v\nwant %+v", ops, tc.ops)
			}
		})
	}
}
