package grpcapi

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// One-entry string metadata converts to one shared Struct per (key, value);
// anything else is built per result, as before.
func TestSharedMetadataStruct(t *testing.T) {
	a := resultToProto(tool.Success("x", map[string]any{"server": "github"}))
	b := resultToProto(tool.Success("y", map[string]any{"server": "github"}))
	if a.Metadata == nil || a.Metadata != b.Metadata {
		t.Fatalf("two results with {server: github}: Structs %p and %p, want one shared", a.Metadata, b.Metadata)
	}
	if got := a.Metadata.GetFields()["server"].GetStringValue(); got != "github" || len(a.Metadata.GetFields()) != 1 {
		t.Fatalf("shared Struct = %v", a.Metadata)
	}
	if c := resultToProto(tool.Success("z", map[string]any{"server": "gitlab"})); c.Metadata == a.Metadata || c.Metadata.GetFields()["server"].GetStringValue() != "gitlab" {
		t.Fatalf("{server: gitlab} got %v", c.Metadata)
	}
	two := resultToProto(tool.Success("z", map[string]any{"server": "github", "truncated": true}))
	if two.Metadata == a.Metadata || len(two.Metadata.GetFields()) != 2 || !two.Metadata.GetFields()["truncated"].GetBoolValue() {
		t.Fatalf("two entries: %v", two.Metadata)
	}
	if n := resultToProto(tool.Success("z", map[string]any{"n": 3})); n.Metadata.GetFields()["n"].GetNumberValue() != 3 {
		t.Fatalf("a number: %v", n.Metadata)
	}
	// Invalid UTF-8 cannot be a proto string: it goes through JSON, as before.
	if bad := resultToProto(tool.Success("z", map[string]any{"k": "\xff"})); bad.Metadata == nil {
		t.Fatal("invalid UTF-8 value: no metadata")
	}
}

// The cache stops growing at its bound; values past it still convert.
func TestSharedMetadataBounded(t *testing.T) {
	for i := range maxSharedMeta + 10 {
		v := fmt.Sprintf("bound-%d", i)
		if s := sharedStruct("k", v); s.GetFields()["k"].GetStringValue() != v {
			t.Fatalf("value %d: %v", i, s)
		}
	}
	if n := len(*sharedMeta.Load()); n > maxSharedMeta {
		t.Fatalf("cache holds %d entries, bound %d", n, maxSharedMeta)
	}
}

// Many goroutines build and marshal responses sharing one Struct at once
// (run with -race).
func TestSharedMetadataConcurrentMarshal(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				r := resultToProto(tool.Success("out", map[string]any{"server": fmt.Sprint("s", (g+i)%3)}))
				b, err := proto.Marshal(r)
				if err != nil {
					t.Error(err)
					return
				}
				var back = r.ProtoReflect().New().Interface()
				if err := proto.Unmarshal(b, back); err != nil || !proto.Equal(back, r) {
					t.Errorf("round trip: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
