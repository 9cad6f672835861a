package vault

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// keyIDSize is how much of a key's fingerprint a record carries to say
// which key sealed it.
const keyIDSize = 8

// Key is one AES-256 key.
type Key struct {
	secret [32]byte
	id     [keyIDSize]byte
}

// Keys are the vault's keys: the first seals, every one opens.
type Keys []Key

func newKey(b []byte) Key {
	var k Key
	copy(k.secret[:], b)
	sum := sha256.Sum256(append([]byte("toolnexus vault key id\x00"), b...))
	copy(k.id[:], sum[:])
	return k
}

// RandomKeys is one fresh key, for a vault that lives in memory only.
func RandomKeys() Keys {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return Keys{newKey(b)}
}

// LoadKeys reads a key file: one key per line, each 32 bytes written as
// base64 (standard or URL alphabet, padded or not) or as 64 hex digits;
// blank lines and lines starting with # are skipped. The first key seals
// new records; the others still open the records they sealed, so a key is
// rotated by putting the new one first and dropping the old one once every
// record has been rewritten. Errors name the line, never a key.
func LoadKeys(path string) (Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	return ParseKeys(data)
}

// ParseKeys reads a key file's content (see LoadKeys).
func ParseKeys(data []byte) (Keys, error) {
	var keys Keys
	seen := map[[keyIDSize]byte]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, ok := decodeKey(line)
		if !ok {
			return nil, fmt.Errorf("line %d is not a 32-byte key: write 32 random bytes as base64 or 64 hex digits (e.g. `openssl rand -base64 32`)", n)
		}
		k := newKey(b)
		if seen[k.id] {
			return nil, fmt.Errorf("line %d repeats a key of an earlier line", n)
		}
		seen[k.id] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("holds no key: write one line of 32 random bytes as base64 (e.g. `openssl rand -base64 32`)")
	}
	return keys, nil
}

func decodeKey(s string) ([]byte, bool) {
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, true
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, true
		}
	}
	return nil, false
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
