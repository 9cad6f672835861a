package config_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestSearchEmbeddings(t *testing.T) {
	t.Setenv("EMBED_KEY", "sk-from-env-0123")
	cfg, err := config.Parse([]byte(`{"search": {"embeddings": {"url": "http://127.0.0.1:11434/v1/embeddings",
		"model": "nomic-embed-text", "apiKey": "${EMBED_KEY}", "queryTimeoutMs": 80,
		"queryPrefix": "search_query: ", "documentPrefix": "search_document: ", "weight": 1}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Search.Embeddings
	if e == nil || e.APIKey != "sk-from-env-0123" || e.Model != "nomic-embed-text" || e.QueryTimeout.Milliseconds() != 80 ||
		e.QueryPrefix != "search_query: " || e.DocumentPrefix != "search_document: " || e.Weight != 1 {
		t.Fatalf("embeddings %+v", e)
	}
	if s := e.String(); strings.Contains(s, "sk-from-env") {
		t.Fatalf("String shows the key: %s", s)
	}
	if cfg, _ := config.Parse([]byte(`{}`), "", t.TempDir()); cfg.Search.Embeddings != nil {
		t.Fatal("embeddings on by default")
	}
	for _, tc := range []struct{ raw, key string }{
		{`{"search": {"embeddings": {"model": "m"}}}`, "search.embeddings.url"},
		{`{"search": {"embeddings": {"url": "ftp://h/e", "model": "m"}}}`, "search.embeddings.url"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings"}}}`, "search.embeddings.model"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "queryTimeoutMs": 0}}}`, "search.embeddings.queryTimeoutMs"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "apiKey": "${NO_SUCH_VAR_X}"}}}`, "search.embeddings.apiKey"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "weight": 0}}}`, "search.embeddings.weight"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "weight": 11}}}`, "search.embeddings.weight"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "queryPrefix": "query:\n"}}}`, "search.embeddings.queryPrefix"},
		{`{"search": {"embeddings": {"url": "http://h/v1/embeddings", "model": "m", "documentPrefix": "` + strings.Repeat("p", 300) + `"}}}`, "search.embeddings.documentPrefix"},
		{`{"search": {"embedding": {}}}`, "search"},
	} {
		_, err := config.Parse([]byte(tc.raw), "", t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+tc.key) && !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want an error naming %s", tc.raw, err, tc.key)
		}
	}
}
