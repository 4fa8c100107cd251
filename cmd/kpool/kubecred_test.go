package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// TestSelfSignedRoot: the kubeconfigs of a kpool served with a certificate
// of its own CA trust that CA (the last certificate of --tls-cert, when it
// signed itself); one of a chain that ends elsewhere adds nothing.
func TestSelfSignedRoot(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(cn string, isCA bool, parent *x509.Certificate) (*x509.Certificate, []byte) {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: isCA, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	ca, caPEM := mk("kpool CA", true, nil)
	_, leafPEM := mk("kpool.example.com", false, ca)
	other, _ := mk("another CA", true, nil)
	_, strayPEM := mk("kpool.example.com", false, other)
	for _, c := range []struct {
		name, file string
		want       []byte
	}{
		{"leaf and its CA", string(leafPEM) + string(caPEM), caPEM},
		{"the CA alone", string(caPEM), caPEM},
		{"a leaf of a CA not in the file", string(strayPEM), nil},
		{"no file", "", nil},
	} {
		path := ""
		if c.file != "" {
			path = writeFile(t, "cert.pem", c.file)
		}
		if got := selfSignedRoot(path); !bytes.Equal(got, c.want) {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}
