package plainjson_test

import (
	"reflect"
	"testing"

	"github.com/toolnexus/toolnexus/internal/plainjson"
)

func TestOf(t *testing.T) {
	type result struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content,omitempty"`
		Count   int            `json:"count"`
	}
	got := plainjson.Of(&result{Action: "accept", Content: map[string]any{"n": 2}, Count: 3})
	want := map[string]any{"action": "accept", "content": map[string]any{"n": float64(2)}, "count": float64(3)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Of = %#v, want %#v", got, want)
	}
	if plainjson.Of(nil) != nil || plainjson.Of(make(chan int)) != nil {
		t.Fatal("nil or an unencodable value must give nil")
	}
}
