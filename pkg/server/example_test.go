package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A server with one tool of your own, next to whatever the config file
// declares, called over gRPC the way an agent would.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "toolnexus-example-")
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "toolnexus.json")
	_ = os.WriteFile(cfg, []byte(`{"builtins": false}`), 0o600)

	type greetArgs struct {
		Name string `json:"name" jsonschema:"description=Who to greet"`
	}
	greet := tool.Must(tool.Typed("greet", func(_ context.Context, a greetArgs) (any, error) {
		return "hello, " + a.Name, nil
	}, tool.WithDescription("Greet someone")))

	srv, err := server.New(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Native: []tool.Tool{greet}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Listen(); err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	conn, _ := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	client := pb.NewRegistryServiceClient(conn)
	resp, _ := client.Execute(context.Background(), &pb.ExecuteRequest{Name: "greet",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"name": "Ada"}`}})
	fmt.Println(resp.GetResult().GetOutput(), resp.GetResult().GetOutcome())

	resp, _ = client.Execute(context.Background(), &pb.ExecuteRequest{Name: "greet",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"name": 7}`}})
	fmt.Println(resp.GetResult().GetIsError(), resp.GetResult().GetOutcome())

	conn.Close()
	stop()
	fmt.Println(<-served)
	// Output:
	// hello, Ada OUTCOME_OK
	// true OUTCOME_INVALID_ARGUMENTS
	// <nil>
}

// Check answers what a start with the same options would, without starting:
// here a public listener that no credential guards.
func ExampleCheck() {
	_, err := server.Check(server.Options{Listen: "0.0.0.0:50051"})
	var ce *server.ConfigError
	if errors.As(err, &ce) {
		fmt.Println("refused:", ce.Key)
	}
	_, err = server.Check(server.Options{Listen: "127.0.0.1:50051"})
	fmt.Println("on loopback:", err)
	// Output:
	// refused: server.listen
	// on loopback: <nil>
}

// The first line of a main that builds its own server: when the sandbox
// re-executes the program as its helper, the helper takes over here and
// the rest of main never runs.
func ExampleEnterSandboxHelper() {
	server.EnterSandboxHelper()

	srv, err := server.New(server.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	_ = srv.Shutdown(context.Background())
}
