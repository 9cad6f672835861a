package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// protocol is the A2A wire dialect spoken to one agent.
type protocol uint8

const (
	proto10 protocol = iota + 1 // A2A 1.0: PascalCase methods, enum names, A2A-Version header
	proto03                     // A2A 0.3: slash methods, "kind" discriminators
)

func (p protocol) String() string {
	if p == proto10 {
		return "1.0"
	}
	return "0.3"
}

// agentCard is the subset of an A2A agent card (1.0 or 0.3) that we use.
type agentCard struct {
	Name        string `json:"name"`
	Description string `json:"description"`

	// 1.0: every endpoint is listed with its binding and version.
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`

	// 0.3: the main endpoint at the top level, extra ones aside.
	URL                  string `json:"url"`
	ProtocolVersion      string `json:"protocolVersion"`
	PreferredTransport   string `json:"preferredTransport"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`

	Capabilities struct {
		Streaming bool `json:"streaming"`
	} `json:"capabilities"`

	Skills []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"skills"`
}

// endpoint is where to send JSON-RPC and in which dialect.
type endpoint struct {
	url   string
	proto protocol
}

// maxCardBytes bounds the card download; real cards are a few KiB.
const maxCardBytes = 1 << 20

// fetchCard GETs and decodes the agent card.
func (c *client) fetchCard(ctx context.Context, cardURL string) (*agentCard, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, fmt.Errorf("agent card %s: %v", cardURL, err)
	}
	req.Header = c.header.Clone()
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching agent card: %v", unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := readLimited(resp.Body, maxCardBytes)
	if err != nil {
		return nil, fmt.Errorf("reading agent card %s: %v", cardURL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("agent card %s: HTTP %d: check the card URL and the agent's headers", cardURL, resp.StatusCode)
	}
	var card agentCard
	if err := json.Unmarshal(body, &card); err != nil {
		return nil, fmt.Errorf("agent card %s is not a JSON agent card: %v", cardURL, err)
	}
	if strings.TrimSpace(card.Name) == "" {
		return nil, fmt.Errorf("agent card %s has no name: an A2A agent card must set \"name\"", cardURL)
	}
	return &card, nil
}

// pickEndpoint chooses the JSON-RPC endpoint, preferring protocol 1.0 when
// the card offers it, falling back to 0.3 (listed in supportedInterfaces
// by a 1.0 card that keeps a compat endpoint, or the top-level url of a
// 0.3 card). Relative URLs resolve against the card URL.
func (card *agentCard) pickEndpoint(cardURL string) (endpoint, error) {
	var legacy string
	for _, in := range card.SupportedInterfaces {
		if !strings.EqualFold(in.ProtocolBinding, "JSONRPC") || in.URL == "" {
			continue
		}
		switch major(in.ProtocolVersion) {
		case 1:
			return resolveEndpoint(cardURL, in.URL, proto10)
		case 0:
			if isV03(in.ProtocolVersion) && legacy == "" {
				legacy = in.URL
			}
		}
	}
	if legacy != "" {
		return resolveEndpoint(cardURL, legacy, proto03)
	}
	if card.URL != "" && (card.ProtocolVersion == "" || isV03(card.ProtocolVersion)) {
		// A 0.3 card's top-level url speaks preferredTransport (JSONRPC
		// when absent); otherwise look for a JSON-RPC additional interface.
		if card.PreferredTransport == "" || strings.EqualFold(card.PreferredTransport, "JSONRPC") {
			return resolveEndpoint(cardURL, card.URL, proto03)
		}
		for _, in := range card.AdditionalInterfaces {
			if strings.EqualFold(in.Transport, "JSONRPC") && in.URL != "" {
				return resolveEndpoint(cardURL, in.URL, proto03)
			}
		}
	}
	return endpoint{}, fmt.Errorf("agent card %s offers no JSON-RPC endpoint for A2A protocol 1.0 or 0.3 "+
		"(a 1.0 card lists supportedInterfaces with protocolBinding \"JSONRPC\"; a 0.3 card has url and protocolVersion \"0.3\")", cardURL)
}

func resolveEndpoint(cardURL, ref string, p protocol) (endpoint, error) {
	base, err := url.Parse(cardURL)
	if err != nil {
		return endpoint{}, err
	}
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return endpoint{}, fmt.Errorf("agent card %s: endpoint %q is not an http(s) URL", cardURL, ref)
	}
	return endpoint{url: u.String(), proto: p}, nil
}

// major is the major number of a version such as "1.0" or "0.3.2"; -1 when
// it is not a version.
func major(v string) int {
	head, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// isV03 accepts "0.3" and "0.3.x".
func isV03(v string) bool {
	v = strings.TrimSpace(v)
	return v == "0.3" || strings.HasPrefix(v, "0.3.")
}
