package grpcapi

import (
	"sync/atomic"

	"google.golang.org/protobuf/types/known/structpb"
)

// Metadata with one string entry — {"server": "github"}, which an MCP
// source returns with every result — converts to the same Struct every
// time. Those Structs are built once and shared by every response: nothing
// changes a response's Struct after resultToProto, and a proto message that
// no one changes is safe to marshal from many goroutines at once.
//
// The cache is a map published behind an atomic pointer: a call reads it
// without a lock, a miss copies it with one more entry. It stops growing
// at maxSharedMeta entries (a tool putting a different value in every
// result gets its Struct built per call, as before).
type metaKey struct{ key, value string }

const maxSharedMeta = 1024

var sharedMeta atomic.Pointer[map[metaKey]*structpb.Struct]

func sharedStruct(key, value string) *structpb.Struct {
	k := metaKey{key, value}
	cur := sharedMeta.Load()
	if cur != nil {
		if s, ok := (*cur)[k]; ok {
			return s
		}
	}
	s := &structpb.Struct{Fields: map[string]*structpb.Value{key: structpb.NewStringValue(value)}}
	for {
		n := 0
		if cur != nil {
			n = len(*cur)
		}
		if n >= maxSharedMeta {
			return s
		}
		next := make(map[metaKey]*structpb.Struct, n+1)
		if cur != nil {
			for kk, v := range *cur {
				next[kk] = v
			}
		}
		next[k] = s
		if sharedMeta.CompareAndSwap(cur, &next) {
			return s
		}
		cur = sharedMeta.Load()
		if prev, ok := (*cur)[k]; ok {
			return prev
		}
	}
}
