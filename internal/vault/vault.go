// Package vault keeps secrets at rest encrypted: the OAuth access and
// refresh tokens of each caller's connection to an upstream, the clients
// toolnexus registered with authorization servers, and the short-lived
// state of a login in progress.
//
// A Vault seals every record with AES-256-GCM under the first key of the
// credentials key file (keyFile; the others only open records sealed
// before a rotation) and binds it to its name, so a record copied under
// another name (another caller's) does not open. Where the sealed records
// live is a Backend: in memory (NewMemory, lost at restart), in a
// directory (NewDir, credentials.dir, one replica), or in Redis
// (redisvault, cluster.redis, every replica). Every backend passes the
// same contract (vaulttest).
//
// No method logs, and no error carries a record's content.
package vault

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is a record the backend does not hold (never written,
// deleted, taken, or expired).
var ErrNotFound = errors.New("vault: no such record")

// ErrLocked is a Lock another holder has.
var ErrLocked = errors.New("vault: locked by another holder")

// Backend stores sealed records by name. Every method is safe for
// concurrent use; each is atomic on its own.
type Backend interface {
	// Put stores rec under key, replacing what was there; ttl > 0 makes
	// it expire.
	Put(ctx context.Context, key string, rec []byte, ttl time.Duration) error
	// Get returns the record, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Take returns the record and removes it in one step: of two callers
	// taking the same key, exactly one gets it, the other ErrNotFound.
	Take(ctx context.Context, key string) ([]byte, error)
	// Delete removes the record and reports whether there was one.
	Delete(ctx context.Context, key string) (bool, error)
	// Keys lists the names of the live records starting with prefix.
	Keys(ctx context.Context, prefix string) ([]string, error)
	// Lock takes the named lock for at most ttl (it is released then even
	// if its holder died); ErrLocked while another holds it. unlock
	// releases it only if it is still this holder's.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), err error)
	// Watch calls fn with the key of every record written or removed
	// through any handle of this store (in Redis: on any replica), until
	// stop. fn must not block.
	Watch(fn func(key string)) (stop func())
	// Close releases the backend's connections and goroutines.
	Close() error
}

// Vault seals records into a Backend.
type Vault struct {
	b    Backend
	keys Keys
	aead []cipher.AEAD // one per key, in keys' order
}

// New is a vault over b sealing with keys (at least one).
func New(b Backend, keys Keys) (*Vault, error) {
	if len(keys) == 0 {
		return nil, errors.New("vault: no key")
	}
	v := &Vault{b: b, keys: keys}
	for _, k := range keys {
		block, err := aes.NewCipher(k.secret[:])
		if err != nil {
			return nil, err
		}
		g, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		v.aead = append(v.aead, g)
	}
	return v, nil
}

// Record format: version, the sealing key's id, the nonce, then the
// AES-GCM ciphertext with its tag. The record's name is the additional
// data, so a record moved to another name fails to open.
const (
	recordVersion = 1
	nonceSize     = 12
	headerSize    = 1 + keyIDSize + nonceSize
	aadPrefix     = "toolnexus/vault/v1\x00"
)

// seal encrypts plaintext for key under the first (current) key.
func (v *Vault) seal(key string, plaintext []byte) ([]byte, error) {
	out := make([]byte, headerSize, headerSize+len(plaintext)+v.aead[0].Overhead())
	out[0] = recordVersion
	copy(out[1:], v.keys[0].id[:])
	nonce := out[1+keyIDSize : headerSize]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("vault: no randomness: %w", err)
	}
	return v.aead[0].Seal(out, nonce, plaintext, []byte(aadPrefix+key)), nil
}

// open decrypts a record read from key with whichever key sealed it.
func (v *Vault) open(key string, rec []byte) ([]byte, error) {
	if len(rec) < headerSize || rec[0] != recordVersion {
		return nil, fmt.Errorf("vault: record %q is not a sealed record of this version", key)
	}
	for i, k := range v.keys {
		if string(k.id[:]) != string(rec[1:1+keyIDSize]) {
			continue
		}
		pt, err := v.aead[i].Open(nil, rec[1+keyIDSize:headerSize], rec[headerSize:], []byte(aadPrefix+key))
		if err != nil {
			return nil, fmt.Errorf("vault: record %q does not open: it was altered, or moved from another name", key)
		}
		return pt, nil
	}
	return nil, fmt.Errorf("vault: record %q was sealed with a key that is not in credentials.keyFile (a key removed before its records were rewritten?)", key)
}

// Put seals plaintext and stores it under key (ttl > 0: it expires).
func (v *Vault) Put(ctx context.Context, key string, plaintext []byte, ttl time.Duration) error {
	rec, err := v.seal(key, plaintext)
	if err != nil {
		return err
	}
	return v.b.Put(ctx, key, rec, ttl)
}

// Get is the record's plaintext, or ErrNotFound.
func (v *Vault) Get(ctx context.Context, key string) ([]byte, error) {
	rec, err := v.b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return v.open(key, rec)
}

// Take is Get and Delete in one step: a record taken once is gone, so a
// second Take of it (a replayed login state) gets ErrNotFound.
func (v *Vault) Take(ctx context.Context, key string) ([]byte, error) {
	rec, err := v.b.Take(ctx, key)
	if err != nil {
		return nil, err
	}
	return v.open(key, rec)
}

// Delete removes the record; it reports whether there was one.
func (v *Vault) Delete(ctx context.Context, key string) (bool, error) { return v.b.Delete(ctx, key) }

// Keys lists the live records' names starting with prefix.
func (v *Vault) Keys(ctx context.Context, prefix string) ([]string, error) {
	return v.b.Keys(ctx, prefix)
}

// Lock is the backend's lock (see Backend.Lock).
func (v *Vault) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	return v.b.Lock(ctx, name, ttl)
}

// Watch is the backend's change feed (see Backend.Watch).
func (v *Vault) Watch(fn func(key string)) (stop func()) { return v.b.Watch(fn) }

// Close closes the backend.
func (v *Vault) Close() error { return v.b.Close() }
