// Command otlprecv is an OTLP/gRPC trace receiver for the benchmarks: the
// collector's TraceService on 127.0.0.1, counting spans and keeping none.
// It prints its endpoint (http://127.0.0.1:PORT) on the first line of
// stdout and serves until its stdin closes, then prints how many spans it
// received.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

func main() {
	r, err := testutil.NewOTLPReceiver()
	if err != nil {
		log.Fatal(err)
	}
	r.Discard()
	fmt.Println(r.Endpoint)
	_, _ = io.Copy(io.Discard, os.Stdin)
	r.Stop()
	fmt.Println(r.Count())
}
