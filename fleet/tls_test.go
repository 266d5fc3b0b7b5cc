package fleet_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/fleet"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleet test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	srv := startRedisOn(t, true, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-ca-cert-file", certFile, "--tls-auth-clients", "no")
	link := func(name string, tc *tls.Config) *fleet.Link {
		cfg := linkConfig(srv, t, name)
		cfg.Client = srv.client(t, func(o *redis.Options) { o.TLSConfig = tc })
		l, err := fleet.New(cfg, groupConfig())
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		return l
	}
	t.Run("replicas linked over TLS share a trip", func(t *testing.T) {
		a := link("tls-a", &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
		b := link("tls-b", &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
		for _, l := range []*fleet.Link{a, b} {
			eventually(t, patience, "link up", func() bool { return l.Stats().Up })
		}
		ea, err := a.Group().Executor("payments")
		require.NoError(t, err)
		eb, err := b.Group().Executor("payments")
		require.NoError(t, err)
		ea.Breaker().Trip(breaker.Manual)
		eventually(t, patience, "the trip arrives", func() bool { return eb.Breaker().State() == breaker.Open })
		assert.Equal(t, breaker.Remote, eb.Breaker().Stats().Reason)
	})
	t.Run("a client that does not trust the server stays down", func(t *testing.T) {
		l := link("tls-c", &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12})
		eventually(t, patience, "an error is reported", func() bool { return l.Stats().LastError != "" })
		assert.False(t, l.Stats().Up)
		assert.Contains(t, l.Stats().LastError, "certificate")
	})
}
