package patch_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/patch"
)

// FuzzParse: the parser never panics, and what it accepts is well
// formed: at least one operation, each with a known kind and a path.
// Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch")
	f.Add("*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+c\n*** End of File\n*** Delete File: b\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		ops, err := patch.Parse(text)
		if err != nil {
			if ops != nil {
				t.Fatalf("ops %v returned with error %v", ops, err)
			}
			return
		}
		if len(ops) == 0 {
			t.Fatal("accepted a patch with no operations")
		}
		for _, op := range ops {
			switch op.Kind {
			case patch.OpAdd, patch.OpUpdate, patch.OpDelete:
			default:
				t.Fatalf("unknown kind %q", op.Kind)
			}
			if strings.TrimSpace(op.Path) == "" || op.Path != strings.TrimSpace(op.Path) {
				t.Fatalf("bad path %q", op.Path)
			}
			if op.Kind != patch.OpUpdate && len(op.Hunks) > 0 {
				t.Fatalf("%s with hunks", op.Kind)
			}
		}
	})
}
