package oidcop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"

	"github.com/go-jose/go-jose/v4"
)

// key is one of the provider's key pairs. The provider signs with the
// newest and publishes all of them, as a provider rotating its keys does:
// a token signed before a rotation stays verifiable until it expires.
type key struct {
	kid  string
	priv crypto.Signer
	alg  jose.SignatureAlgorithm
}

func newRSAKey(kid string) (key, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	return key{kid: kid, priv: k, alg: jose.RS256}, err
}

func newECKey(kid string) (key, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return key{kid: kid, priv: k, alg: jose.ES256}, err
}

// signingKey is a key as op.SigningKey (the private half).
type signingKey struct{ key }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k signingKey) Key() any                                    { return k.priv }
func (k signingKey) ID() string                                  { return k.kid }

// publicKey is a key as op.Key, what the JWKS lists.
type publicKey struct{ key }

func (k publicKey) ID() string                         { return k.kid }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return k.alg }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.priv.Public() }
