package mcpgateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A requestState is the opaque string an input_required result hands the
// client, which it echoes on the retry. Ours names the pending call and
// binds it to whoever it was made for:
//
//	base64url(JSON claims) "." base64url(HMAC-SHA256(key, JSON claims))
//
// The claims are not secret (the pending id is in the result already);
// the MAC makes them unforgeable, and the bindings make a state useless to
// anyone else: another principal, another toolnexus session, another tool
// or other arguments are all refused, as is a state past its expiry. The
// binding is the one every suspended call has (suspend.Bind), so the same
// arguments in another key order or spacing are the same call here too. The
// key is server.mcp.stateKeyFile's content (the same on every replica of
// sessions.shared, so a retry may reach any of them) or a random key of
// this process.
type stateClaims struct {
	Pending   string `json:"p"`           // the pending request's id
	Kind      string `json:"k"`           // its kind, to read the client's answer
	Key       string `json:"i,omitempty"` // the upstream's key of the request in its round ("" for none)
	Round     string `json:"r,omitempty"` // which of the upstream's rounds (with Key)
	Tool      string `json:"t"`           // the tool called
	Args      string `json:"a"`           // the arguments' canonical digest (suspend.Bind)
	Principal string `json:"u,omitempty"` // the caller's principal name
	Session   string `json:"s,omitempty"` // the toolnexus session
	Expires   int64  `json:"x,omitempty"` // unix seconds; 0: the request does not expire
}

type stateSigner struct{ key []byte }

// stateKeyBytes is the size of a random key.
const stateKeyBytes = 32

func newStateSigner(key []byte) *stateSigner {
	if len(key) == 0 {
		key = make([]byte, stateKeyBytes)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	}
	return &stateSigner{key: bytes.Clone(key)}
}

func (s *stateSigner) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)
}

// sign returns the requestState for c.
func (s *stateSigner) sign(c stateClaims) string {
	payload, _ := json.Marshal(c) // strings and an int: never fails
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(payload))
}

// Why a requestState is refused; the client sees these, which name the
// problem without saying what a valid state would hold.
var (
	errStateMalformed = errors.New("requestState is not one this server issued")
	errStateForged    = errors.New("requestState signature does not match")
	errStateMoved     = errors.New("requestState was issued for another caller, session, tool or arguments")
	errStateExpired   = errors.New("requestState has expired; call the tool again without it")
)

// open checks state and returns its claims when it was issued by this key
// for exactly want (whose Pending, Kind and Expires are ignored).
func (s *stateSigner) open(state string, want stateClaims, now time.Time) (stateClaims, error) {
	enc := base64.RawURLEncoding
	p64, m64, ok := strings.Cut(state, ".")
	if !ok {
		return stateClaims{}, errStateMalformed
	}
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return stateClaims{}, errStateMalformed
	}
	if !hmac.Equal(mac, s.mac(payload)) {
		return stateClaims{}, errStateForged
	}
	var c stateClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.Pending == "" {
		return stateClaims{}, errStateMalformed
	}
	if err := c.admits(want, now); err != nil {
		return stateClaims{}, err
	}
	return c, nil
}

// admits checks that the claims are for exactly want's call (tool,
// arguments, principal, session) and not past their expiry.
func (c stateClaims) admits(want stateClaims, now time.Time) error {
	if c.Tool != want.Tool || c.Args != want.Args || c.Principal != want.Principal || c.Session != want.Session {
		return errStateMoved
	}
	if c.Expires != 0 && now.Unix() > c.Expires {
		return errStateExpired
	}
	return nil
}
