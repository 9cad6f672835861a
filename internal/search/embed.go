package search

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The outcomes of the semantic side of one search, the label of the metric
// Embedder counts them under (EmbedOptions.Count).
const (
	EmbedUsed        = "used"        // fused with the lexical ranking
	EmbedNotReady    = "not_ready"   // some visible tool has no vector yet: lexical alone
	EmbedUnavailable = "unavailable" // the endpoint failed lately: lexical alone, nothing asked
	EmbedTimeout     = "timeout"     // the query's vector did not come in time: lexical alone
	EmbedError       = "error"       // the endpoint refused the query: lexical alone
)

// EmbedOutcomes are every outcome, for a metric's series.
var EmbedOutcomes = []string{EmbedUsed, EmbedNotReady, EmbedUnavailable, EmbedTimeout, EmbedError}

// Defaults of EmbedOptions.
const (
	DefaultEmbedQueryTimeout = 250 * time.Millisecond
	// DefaultEmbedWeight is the semantic ranking's weight in the fusion,
	// chosen with a general sentence encoder (eval_embed_test.go): at
	// equal weight it pulled good lexical answers down. A
	// retrieval-trained model may deserve more; none could be measured
	// here (docs/search.md).
	DefaultEmbedWeight = 0.25
	embedBatch         = 32
	// embedRequestTimeout bounds one background request: long enough for a
	// model on a CPU (32 tools of Universal Sentence Encoder on a busy
	// 2-core machine take ~10 s); a search never waits on it.
	embedRequestTimeout = 2 * time.Minute
	embedMaxBackoff     = 5 * time.Minute
	maxEmbedText        = 2000 // bytes of a tool's text sent to be embedded
	maxQueryVectors     = 1024 // query vectors kept, per Embedder
)

// EmbedOptions configure the semantic side (search.embeddings).
type EmbedOptions struct {
	// URL is an OpenAI-compatible embeddings endpoint (…/v1/embeddings,
	// as hosted APIs, Ollama, vLLM and TEI serve it); Model its model.
	URL, Model string
	// APIKey, when set, is sent as a bearer token. It never appears in a
	// log, an error or a metric.
	APIKey string
	// QueryTimeout is the longest a search waits for its query's vector
	// (0 = DefaultEmbedQueryTimeout); past it the search answers lexically
	// and the endpoint counts as down until a background probe succeeds.
	QueryTimeout time.Duration
	// QueryPrefix and DocumentPrefix are put before every query and every
	// tool's text sent to be embedded. Retrieval-trained models are
	// trained with them and rank markedly worse without: nomic-embed-text
	// wants "search_query: " and "search_document: ", e5 "query: " and
	// "passage: ", bge a query instruction alone.
	QueryPrefix, DocumentPrefix string
	// Weight is the semantic ranking's weight in the fusion, the lexical
	// one's being 1 (0 = DefaultEmbedWeight, the ranking's own).
	Weight float64
	// Count records a search's outcome (one of EmbedOutcomes); nil counts
	// nothing.
	Count func(outcome string)
	// Logger reports the endpoint failing and recovering.
	Logger *slog.Logger
	// Client makes the requests; nil = a default client.
	Client *http.Client
	// Servers says what each source says about itself, by its layer
	// (LayerID.String()), as Cache.Servers does: the server's title is
	// embedded with each of its tools. nil = each source's layer name.
	Servers func() map[string]ServerInfo
}

// Embedder is the optional semantic side of search: a vector per tool
// definition, computed in the background after each registry change and
// kept by the definition's digest (a tool that did not change is not asked
// again), and a vector per query, asked at search time within
// QueryTimeout. A search never waits on an endpoint known to be failing:
// the first failure (a timeout or an error) marks it down, searches answer
// lexically without asking it, and the background worker probes it until
// it answers again.
type Embedder struct {
	opts   EmbedOptions
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
	snap   atomic.Pointer[registry.Snapshot] // the newest to embed
	down   atomic.Bool

	mu      sync.RWMutex
	vectors map[[32]byte][]float32 // by definition digest
	digests map[*tool.Tool][32]byte
	queries map[string][]float32 // by view key and query text

	// textOf is what is embedded for a tool of the named server
	// (embedText; the evaluation measures others).
	textOf func(t *tool.Tool, server string) string
}

// NewEmbedder starts the semantic side's worker; Close ends it.
func NewEmbedder(opts EmbedOptions) *Embedder {
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultEmbedQueryTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Embedder{opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		wake: make(chan struct{}, 1), vectors: map[[32]byte][]float32{}, digests: map[*tool.Tool][32]byte{},
		queries: map[string][]float32{}, textOf: embedText}
	go e.work()
	return e
}

// Close stops the worker and waits for it; a request in flight is
// cancelled.
func (e *Embedder) Close() {
	e.cancel()
	<-e.done
}

// Update hands the worker a new registry snapshot to embed; it returns at
// once.
func (e *Embedder) Update(snap *registry.Snapshot) {
	e.snap.Store(snap)
	e.poke()
}

func (e *Embedder) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Embedder) count(outcome string) {
	if e.opts.Count != nil {
		e.opts.Count(outcome)
	}
}

// work embeds what each new snapshot lacks, and probes the endpoint while
// it is down, with a backoff that doubles up to embedMaxBackoff.
func (e *Embedder) work() {
	defer close(e.done)
	backoff := time.Second
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.wake:
		}
		for {
			err := e.fill()
			if err == nil && e.down.Load() {
				_, err = e.embed(e.ctx, []string{"probe"})
			}
			if err == nil {
				if e.down.Swap(false) {
					e.log.Info("embeddings endpoint answers again: searches use it")
				}
				backoff = time.Second
				break
			}
			if e.ctx.Err() != nil {
				return
			}
			if !e.down.Swap(true) {
				e.log.Warn("embeddings endpoint failing: searches rank lexically until it answers", "error", err, "retry_in", backoff)
			}
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, embedMaxBackoff)
		}
	}
}

// fill embeds every tool of the newest snapshot that has no vector.
func (e *Embedder) fill() error {
	snap := e.snap.Load()
	if snap == nil {
		return nil
	}
	var info map[string]ServerInfo
	if e.opts.Servers != nil {
		info = e.opts.Servers()
	}
	var texts []string
	var keys [][32]byte
	e.mu.Lock()
	for _, en := range snap.Entries() {
		if _, ok := e.digests[en.Tool]; !ok {
			text := e.opts.DocumentPrefix + e.textOf(en.Tool, serverLabel(en.Layer, info))
			d := textDigest(text)
			e.digests[en.Tool] = d
			if _, ok := e.vectors[d]; !ok && !containsKey(keys, d) {
				texts, keys = append(texts, text), append(keys, d)
			}
		}
	}
	e.mu.Unlock()
	for start := 0; start < len(texts); start += embedBatch {
		end := min(start+embedBatch, len(texts))
		vecs, err := e.embed(e.ctx, texts[start:end])
		if err != nil {
			e.forget(keys[start:])
			return err
		}
		e.mu.Lock()
		for i, v := range vecs {
			e.vectors[keys[start+i]] = v
		}
		e.mu.Unlock()
	}
	return nil
}

func containsKey(keys [][32]byte, k [32]byte) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// forget drops the digests of tools whose vectors a failed request did not
// bring, so the next pass asks for them again.
func (e *Embedder) forget(keys [][32]byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for t, d := range e.digests {
		if containsKey(keys, d) {
			delete(e.digests, t)
		}
	}
}

// textDigest names what was embedded: a vector is reused while a tool's
// embedded text (its server's title, name and first sentence) stays the
// same. A tool is a new *tool.Tool whenever its definition changes.
func textDigest(text string) [32]byte {
	return sha256.Sum256([]byte(text))
}

// serverLabel is the name a source goes by: its title, else its
// serverInfo name, else its layer name (the mcpServers key).
func serverLabel(layer registry.LayerID, info map[string]ServerInfo) string {
	i := info[layer.String()]
	return cmp.Or(i.Title, i.Name, layer.Name)
}

// embedText is what is embedded for a tool: its server's name, its own
// name in words and its description's first sentence, the part that says
// what the tool does. Measured on the evaluation's tuning split
// (eval_embed_test.go): the whole description, or parameter names added,
// dilute a sentence encoder's vector; the server's name tells Linear's
// issues from GitHub's.
func embedText(t *tool.Tool, server string) string {
	summary, _ := splitSummary(t.Description)
	return truncateBytes(server+": "+strings.Join(nameWords(t.Name), " ")+": "+summary, maxEmbedText)
}

// nameWords is a tool name in words: cut at '_', '-', '.' and where a word
// starts inside a run of letters ("createIssue" → create Issue), which a
// model's vocabulary knows where it does not know the whole.
func nameWords(name string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		start := 0
		var prev rune
		for i, r := range part {
			if i > 0 && wordBoundary(part, i, prev, r) {
				out = append(out, part[start:i])
				start = i
			}
			prev = r
		}
		out = append(out, part[start:])
	}
	return out
}

func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// errEmbed is a refusal of the endpoint, named by its status only: the
// body may echo the request's credentials.
type errEmbed struct{ status int }

func (e errEmbed) Error() string {
	return fmt.Sprintf("embeddings endpoint answered HTTP %d", e.status)
}

// embed asks the endpoint for the vectors of texts, in order, normalised
// to unit length.
func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, embedRequestTimeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"model": e.opts.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.opts.URL, bytes.NewReader(body))
	if err != nil {
		return nil, e.clean(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, e.clean(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, errEmbed{resp.StatusCode}
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&out); err != nil {
		return nil, errors.New("embeddings endpoint: the answer is not an embeddings list")
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index >= 0 && d.Index < len(vecs) {
			vecs[d.Index] = normalise(d.Embedding)
		}
	}
	for _, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			return nil, errors.New("embeddings endpoint: the answer lacks a vector, or mixes lengths")
		}
	}
	return vecs, nil
}

// clean removes the API key from an error's text, wherever the transport
// may have put it.
func (e *Embedder) clean(err error) error {
	msg := err.Error()
	if e.opts.APIKey != "" {
		msg = strings.ReplaceAll(msg, e.opts.APIKey, "[redacted]")
	}
	return errors.New(msg)
}

func normalise(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}
