// Command listmcp lists the tools of MCP servers live over stdio and writes
// each server's definitions (its serverInfo and its tools/list, as served)
// to DIR/<key>.json: the unseen catalogs of the search evaluation
// (internal/search/testdata/unseen). It starts the servers named in a JSON
// file of {"key": {"package", "command": [...], "env": {...}}} with the
// package installed under NODE_MODULES (npm install --ignore-scripts), and
// keeps the versions it found in package.json.
//
//	go run ./internal/search/searchtest/listmcp -servers servers.json -node-modules /tmp/evalmcp/node_modules -out DIR
//
// The credentials the servers ask for at start are placeholders: listing
// tools calls no upstream API.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type serverSpec struct {
	Package string            `json:"package"`
	Command []string          `json:"command"`
	Env     map[string]string `json:"env"`
}

// Listed is what the evaluation reads for one server.
type Listed struct {
	Key        string              `json:"key"`
	Package    string              `json:"package"`
	Version    string              `json:"version"`
	ServerInfo *mcp.Implementation `json:"serverInfo"`
	Tools      []*mcp.Tool         `json:"tools"`
}

func main() {
	specs := flag.String("servers", "", "JSON file of the servers to list")
	modules := flag.String("node-modules", "", "the node_modules directory they are installed in")
	out := flag.String("out", "", "directory to write <key>.json to")
	flag.Parse()
	if err := run(*specs, *modules, *out); err != nil {
		fmt.Fprintln(os.Stderr, "listmcp:", err)
		os.Exit(1)
	}
}

func run(specsFile, modules, out string) error {
	raw, err := os.ReadFile(specsFile)
	if err != nil {
		return err
	}
	var specs map[string]serverSpec
	if err := json.Unmarshal(raw, &specs); err != nil {
		return fmt.Errorf("%s: %w", specsFile, err)
	}
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l, err := list(k, specs[k], modules)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", k, err)
			continue
		}
		b, _ := json.MarshalIndent(l, "", "  ")
		if err := os.WriteFile(filepath.Join(out, k+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %s %s, %d tools\n", k, l.Package, l.Version, len(l.Tools))
	}
	return nil
}

func list(key string, s serverSpec, modules string) (*Listed, error) {
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(modules, s.Package, "package.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{filepath.Join(modules, s.Package, s.Command[0])}, s.Command[1:]...)
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = nil
	client := mcp.NewClient(&mcp.Implementation{Name: "listmcp", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	l := &Listed{Key: key, Package: s.Package, Version: pkg.Version}
	if ir := cs.InitializeResult(); ir != nil {
		l.ServerInfo = ir.ServerInfo
	}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		l.Tools = append(l.Tools, t)
	}
	return l, nil
}
