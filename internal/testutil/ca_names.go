package testutil

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
)

// ServerFor signs a server certificate for the given DNS names (a test
// whose clients reach a local server by a made-up name, resolved by a
// test resolver) and returns the loaded pair.
func (c *CA) ServerFor(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key, der := newCert(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: names[0]},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    names,
	}, c.Cert, c.key)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
