package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"
	"unicode"
)

// Search is the `search` section: how SearchTools and /mcp's search_tools
// rank (docs/search.md).
type Search struct {
	// Embeddings, when set, adds the semantic side: an OpenAI-compatible
	// embeddings endpoint whose vectors are fused with the lexical ranking.
	Embeddings *Embeddings
}

// Embeddings is search.embeddings.
type Embeddings struct {
	// URL is the endpoint itself (…/v1/embeddings).
	URL string
	// Model is the model the endpoint embeds with.
	Model string
	// APIKey is sent as a bearer token; ${VAR} and ${file:…} are expanded.
	APIKey string
	// QueryTimeout is the longest a search waits for its query's vector
	// (default 250 ms).
	QueryTimeout time.Duration
	// QueryPrefix and DocumentPrefix go before each query and each tool's
	// text: the task prefixes retrieval-trained models are trained with.
	QueryPrefix, DocumentPrefix string
	// Weight is the semantic ranking's weight in the fusion (0 = the
	// default, 0.25).
	Weight float64
}

// String never shows the key.
func (e Embeddings) String() string {
	return fmt.Sprintf("Embeddings{%s model=%q key=%v}", e.URL, e.Model, e.APIKey != "")
}

// Default of search.embeddings.queryTimeoutMs.
const DefaultEmbeddingsQueryTimeout = 250 * time.Millisecond

func parseSearch(raw json.RawMessage) (Search, error) {
	var s Search
	if raw == nil {
		return s, nil
	}
	var r struct {
		Embeddings *struct {
			URL            string   `json:"url"`
			Model          string   `json:"model"`
			APIKey         string   `json:"apiKey"`
			QueryTimeoutMS *int64   `json:"queryTimeoutMs"`
			QueryPrefix    string   `json:"queryPrefix"`
			DocumentPrefix string   `json:"documentPrefix"`
			Weight         *float64 `json:"weight"`
		} `json:"embeddings"`
	}
	if err := strictDecode("search", raw, &r); err != nil {
		return s, err
	}
	if r.Embeddings == nil {
		return s, nil
	}
	e := &Embeddings{URL: r.Embeddings.URL, Model: r.Embeddings.Model, QueryTimeout: DefaultEmbeddingsQueryTimeout}
	if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, keyErr("search.embeddings.url", "must be the http(s) URL of an OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:11434/v1/embeddings")
	}
	if e.Model == "" {
		return s, keyErr("search.embeddings.model", "is required: the model the endpoint embeds with, e.g. \"nomic-embed-text\"")
	}
	var err error
	if e.APIKey, err = expandSecret("search.embeddings.apiKey", r.Embeddings.APIKey); err != nil {
		return s, err
	}
	if ms := r.Embeddings.QueryTimeoutMS; ms != nil {
		if *ms < 10 || *ms > 10000 {
			return s, keyErr("search.embeddings.queryTimeoutMs", "must be between 10 and 10000 milliseconds (default %d)", DefaultEmbeddingsQueryTimeout.Milliseconds())
		}
		e.QueryTimeout = time.Duration(*ms) * time.Millisecond
	}
	if e.QueryPrefix, err = embeddingsPrefix("search.embeddings.queryPrefix", r.Embeddings.QueryPrefix); err != nil {
		return s, err
	}
	if e.DocumentPrefix, err = embeddingsPrefix("search.embeddings.documentPrefix", r.Embeddings.DocumentPrefix); err != nil {
		return s, err
	}
	if w := r.Embeddings.Weight; w != nil {
		if !(*w > 0 && *w <= MaxEmbeddingsWeight) {
			return s, keyErr("search.embeddings.weight", "must be above 0 and at most %g: the semantic ranking's weight in the fusion, the lexical one's being 1 (default %g)", MaxEmbeddingsWeight, DefaultEmbeddingsWeight)
		}
		e.Weight = *w
	}
	s.Embeddings = e
	return s, nil
}

// Bounds of search.embeddings' weight and prefixes.
const (
	DefaultEmbeddingsWeight = 0.25
	MaxEmbeddingsWeight     = 10.0
	maxEmbeddingsPrefix     = 256
)

// embeddingsPrefix checks a task prefix: short, one line of printable
// text, as the models' cards give them ("search_query: ", "query: ").
func embeddingsPrefix(key, p string) (string, error) {
	if len(p) > maxEmbeddingsPrefix {
		return "", keyErr(key, "is %d bytes; a task prefix is short (at most %d), e.g. \"search_query: \"", len(p), maxEmbeddingsPrefix)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", keyErr(key, "has a control character (%U); a task prefix is one line of text, e.g. \"search_query: \"", r)
		}
	}
	return p, nil
}
