package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ServingNames are the names the API server's certificate carries: loopback, the name the
// tests resolve to loopback, and the in-cluster names a pod uses for the API server.
var ServingNames = []string{"localhost", TestHost, "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

// ServingIPs are the addresses the serving certificate carries: 127.0.0.2 is deliberately not
// one of them, so that a test can reach the same server by an address the certificate lacks.
var ServingIPs = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}

// TestHost is the name tests use for the API server; scripts/control-plane.sh maps it to
// 127.0.0.1 in /etc/hosts.
const TestHost = "k8s.test"

type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

func newAuthority(name string) (*authority, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return &authority{cert: cert, key: key}, der, nil
}

// issue signs a leaf certificate for a server (names and IPs) or a client (its common name).
func (a *authority) issue(cn string, names []string, ips []net.IP, server bool) (certDER []byte, keyDER []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		DNSNames:     names,
		IPAddresses:  ips,
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err = x509.MarshalECPrivateKey(key)
	return certDER, keyDER, err
}

// issueTo writes a leaf certificate and its key as BASE.crt and BASE.key (0600).
func (a *authority) issueTo(base, cn string, names []string, ips []net.IP, server bool) error {
	certDER, keyDER, err := a.issue(cn, names, ips, server)
	if err != nil {
		return err
	}
	if err := writePEM(base+".crt", "CERTIFICATE", certDER, 0o644); err != nil {
		return err
	}
	return writePEM(base+".key", "EC PRIVATE KEY", keyDER, 0o600)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}

// makeCertificates writes, under dir/pki: the cluster CA (ca.crt, the CA of the serving
// certificate, as in a real cluster), the serving certificate, a front-proxy CA and the
// aggregator's client certificate, and the service-account signing key pair.
func makeCertificates(dir string) error {
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	ca, caDER, err := newAuthority("dumbmonit-testenv-ca")
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	if err := ca.issueTo(filepath.Join(pki, "apiserver"), "kube-apiserver", ServingNames, ServingIPs, true); err != nil {
		return err
	}

	proxyCA, proxyCADER, err := newAuthority("dumbmonit-testenv-front-proxy-ca")
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(pki, "front-proxy-ca.crt"), "CERTIFICATE", proxyCADER, 0o644); err != nil {
		return err
	}
	if err := proxyCA.issueTo(filepath.Join(pki, "front-proxy-client"), "front-proxy-client", nil, nil, false); err != nil {
		return err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(pki, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey), 0o600); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(pki, "sa.pub"), "PUBLIC KEY", pub, 0o644); err != nil {
		return err
	}
	return nil
}

// randomToken is a bearer token for the static token file.
func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}
