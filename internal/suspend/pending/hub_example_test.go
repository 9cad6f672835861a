package pending_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
)

// Two replicas in one process: what B serves, A reaches by B's name; once
// B has left, A is told at once that it is gone.
func ExampleHub() {
	hub := pending.NewHub()
	a, b := hub.Join("a"), hub.Join("b")
	defer a.Close()
	_ = a.ServeForwards(func(context.Context, []byte) []byte { return nil })
	_ = b.ServeForwards(func(_ context.Context, req []byte) []byte { return append([]byte("b answered "), req...) })

	reply, err := a.Forward(context.Background(), "b", []byte("yes"))
	fmt.Println(string(reply), err)
	b.Close()
	_, err = a.Forward(context.Background(), "b", []byte("yes"))
	fmt.Println(errors.Is(err, pending.ErrOwnerGone))
	// Output:
	// b answered yes <nil>
	// true
}
