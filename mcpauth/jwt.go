package mcpauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// private_key_jwt (RFC 7523 2.2, OpenID Connect Core 9): the client
// proves itself with a JWT it signs, iss and sub its client_id, aud the
// authorization server's issuer, a jti never used before and a short
// life; a new one for every token request.

// maxKeyFile bounds what is read of a key file.
const maxKeyFile = 64 << 10

// loadKey reads the private key configured as PEM text, or as the path
// of a PEM file (~ is the home folder): PKCS #8, SEC 1 (EC) or PKCS #1
// (RSA).
func loadKey(spec string) (crypto.Signer, error) {
	data := []byte(spec)
	if !strings.Contains(spec, "-----BEGIN") {
		path := spec
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, err
			}
			path = filepath.Join(home, rest)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("oauth.private_key: %w", err)
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxKeyFile+1)); err != nil {
			return nil, fmt.Errorf("oauth.private_key: %w", err)
		}
		if len(data) > maxKeyFile {
			return nil, fmt.Errorf("oauth.private_key: %s is over %d KiB: not a key", path, maxKeyFile>>10)
		}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("oauth.private_key holds no PEM block (-----BEGIN PRIVATE KEY-----)")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("oauth.private_key is a %q PEM block, not a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth.private_key: %v", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("oauth.private_key is a %T, not an EC, RSA or Ed25519 key", key)
}

// algsFor are the algorithms a key signs, the preferred first.
func algsFor(key crypto.Signer) []string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return []string{"ES256"}
		case 384:
			return []string{"ES384"}
		case 521:
			return []string{"ES512"}
		}
	case *rsa.PrivateKey:
		return []string{"RS256", "PS256", "RS384", "PS384", "RS512", "PS512"}
	case ed25519.PrivateKey:
		return []string{"EdDSA"}
	}
	return nil
}

// pickAlg is the algorithm to sign with: the configured one, which the key
// must sign; else the key's first that the server lists (any, when it
// lists none).
func pickAlg(key crypto.Signer, configured string, supported []string) (string, error) {
	algs := algsFor(key)
	if configured != "" {
		if !slices.Contains(algs, configured) {
			return "", fmt.Errorf("oauth.signing_alg %s does not fit the key, which signs %s", configured, strings.Join(algs, ", "))
		}
		return configured, nil
	}
	if len(supported) == 0 {
		if len(algs) == 0 {
			return "", errors.New("oauth.private_key signs no algorithm Zero knows")
		}
		return algs[0], nil
	}
	for _, a := range algs {
		if slices.Contains(supported, a) {
			return a, nil
		}
	}
	return "", fmt.Errorf("the authorization server takes assertions signed with %s; the key signs %s", clean(strings.Join(supported, ", "), 200), strings.Join(algs, ", "))
}

// assertion is a new client assertion for clientID to audience (the
// authorization server's issuer), signed with key by alg.
func assertion(key crypto.Signer, alg, clientID, audience string, now time.Time) (string, error) {
	if audience == "" {
		return "", errors.New("the authorization server's issuer is unknown: no audience for the client assertion")
	}
	m := jwt.GetSigningMethod(alg)
	if m == nil {
		return "", fmt.Errorf("signing algorithm %s is unknown", alg)
	}
	claims := jwt.RegisteredClaims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.ClaimStrings{audience},
		ID:        rand.Text(),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(2 * time.Minute)),
	}
	return jwt.NewWithClaims(m, claims).SignedString(key)
}
