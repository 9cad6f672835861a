package testutil

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ServeGRPC serves gs on a free loopback port and returns a client
// connection to it. When the test ends the connection closes, the server
// stops gracefully (cleanups registered after this call run before, so a
// test can end its streams first) and a serving error fails the test.
func ServeGRPC(t testing.TB, gs *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		gs.Stop()
		<-served
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		gs.GracefulStop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return conn
}
