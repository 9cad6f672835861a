package suspend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

// Every suspended kind binds its call with Bind: the same arguments in
// another key order and spacing are the same call; another argument is
// another call. Lookup finds a kind's open entry by that binding.
func ExampleBind() {
	asked, _ := suspend.Bind("alice", "s1", "write", json.RawMessage(`{"path": "a.txt", "content": "x"}`))
	same, _ := suspend.Bind("alice", "s1", "write", json.RawMessage(`{"content":"x","path":"a.txt"}`))
	other, _ := suspend.Bind("alice", "s1", "write", json.RawMessage(`{"path": "b.txt", "content": "x"}`))
	fmt.Println(asked == same, asked == other)

	ctx := context.Background()
	s := suspend.NewMemory(nil, 0)
	e, _ := s.Create(ctx, suspend.Request{Kind: suspend.KindRun, Binding: asked, TTL: time.Minute, Data: []byte(`{"record":1}`)})
	found, err := s.Lookup(ctx, suspend.KindRun, same)
	fmt.Println(found.ID == e.ID, string(found.Data), err)
	_, err = s.Lookup(ctx, suspend.KindRun, other)
	fmt.Println(err == suspend.ErrUnknown)
	// Output:
	// true false
	// true {"record":1} <nil>
	// true
}
