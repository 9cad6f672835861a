// Command otlprecv is an OTLP/gRPC trace receiver for the benchmarks: the
// collector's TraceService on 127.0.0.1, counting spans and keeping none.
// It prints its endpoint (http://127.0.0.1:PORT) on the first line of
// stdout and serves until its stdin closes, then prints how many spans it
// received.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/pprof"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

func main() {
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
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
