package server

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/search"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// startEmbeddings starts search.embeddings' semantic side, shared by
// SearchTools and /mcp's search_tools: its worker embeds every tool of each
// new registry snapshot in the background, and each search's outcome is
// counted in toolnexus_search_embeddings_total{outcome}. nil without the
// section; stopEmbeddings ends it. Read at start: changing the section
// needs a restart.
func (s *Server) startEmbeddings(cfg *config.Config, log *slog.Logger) *search.Embedder {
	e := cfg.Search.Embeddings
	if e == nil {
		return nil
	}
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_search_embeddings_total",
		Help: "Searches by what the semantic side (search.embeddings) did: used, or why the answer was lexical alone (not_ready, unavailable, timeout, error).",
	}, []string{"outcome"})
	for _, o := range search.EmbedOutcomes {
		outcomes.WithLabelValues(o)
	}
	s.prom.MustRegister(outcomes)
	emb := search.NewEmbedder(search.EmbedOptions{URL: e.URL, Model: e.Model, APIKey: e.APIKey, QueryTimeout: e.QueryTimeout,
		QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix, Weight: e.Weight,
		Count: func(o string) { outcomes.WithLabelValues(o).Inc() }, Logger: log.With("component", "search-embeddings"),
		Servers: func() map[string]search.ServerInfo {
			out := map[string]search.ServerInfo{}
			for _, src := range s.core.Sources() {
				out[src.Kind+"/"+src.Name] = search.ServerInfo{Title: src.Title, Description: src.Description}
			}
			return out
		}})
	reg := s.core.Registry()
	unsubscribe := reg.Subscribe(func(_, next *registry.Snapshot) { emb.Update(next) })
	emb.Update(reg.Snapshot())
	s.stopEmbeddings = func() {
		unsubscribe()
		emb.Close()
	}
	return emb
}
