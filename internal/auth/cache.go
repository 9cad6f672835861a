package auth

import (
	"encoding/binary"
	"sync/atomic"
)

// cacheSlots bounds the verified-token cache: at most this many JWTs are
// remembered, about 100 KiB of pointers plus one small entry per token.
const cacheSlots = 1 << 13

// tokenCache remembers verified JWTs until they expire, so a repeat call
// costs a hash and a pointer load rather than a signature check. It is
// direct-mapped: a token's SHA-256 picks its one slot, a newer token that
// lands in the same slot replaces it (the older one is verified again on
// its next call). That bounds the size with no eviction pass, and lookups
// and inserts take no lock and allocate nothing.
type tokenCache struct {
	slots [cacheSlots]atomic.Pointer[cachedToken]
}

type cachedToken struct {
	digest [32]byte
	p      *Principal
	// src and thumb are the key source and the thumbprint of the key that
	// signed the token: when the provider stops listing that key, the
	// token is dropped (dropSignedBy).
	src   *keySource
	thumb string
	// until is when the token stops being valid (exp plus the issuer's
	// clock skew), in Unix nanoseconds.
	until int64
}

func slotOf(d *[32]byte) uint64 { return binary.LittleEndian.Uint64(d[:8]) & (cacheSlots - 1) }

// get returns the principal of a token verified before and still valid at
// now, or nil.
func (c *tokenCache) get(d *[32]byte, now int64) *Principal {
	s := &c.slots[slotOf(d)]
	e := s.Load()
	if e == nil || e.digest != *d {
		return nil
	}
	if now >= e.until {
		s.CompareAndSwap(e, nil) // expired: free the slot, never serve it
		return nil
	}
	return e.p
}

func (c *tokenCache) put(d *[32]byte, v verified, src *keySource) {
	c.slots[slotOf(d)].Store(&cachedToken{digest: *d, p: v.p, until: v.until, src: src, thumb: v.thumb})
}

// dropSignedBy forgets every token src's keys with these thumbprints
// signed: a key the provider removed vouches for nothing any more. It
// visits every slot, once per key set change.
func (c *tokenCache) dropSignedBy(src *keySource, thumbs map[string]bool) {
	for i := range c.slots {
		s := &c.slots[i]
		if e := s.Load(); e != nil && e.src == src && thumbs[e.thumb] {
			s.CompareAndSwap(e, nil)
		}
	}
}
