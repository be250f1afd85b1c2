package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// idToken signs the ID token of grant g, issued with access token access,
// bent by the current Misbehaviour.
func (s *Server) idToken(g grant, access string) (string, error) {
	m := s.misbehaviour()
	now := s.clock()
	u := g.user

	// at_hash: the left half of SHA-256 of the access token (RS256).
	sum := sha256.Sum256([]byte(access))
	claims := map[string]any{
		"iss":       s.Issuer(),
		"sub":       u.Subject,
		"aud":       s.ClientID,
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"auth_time": now.Unix(),
		"at_hash":   base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2]),
	}
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	if u.Email != "" {
		claims["email"] = u.Email
		claims["email_verified"] = true
	}
	if u.PreferredUsername != "" {
		claims["preferred_username"] = u.PreferredUsername
	}
	if u.Name != "" {
		claims["name"] = u.Name
	}
	if u.Groups != nil {
		claims["groups"] = u.Groups
	}
	if u.Roles != nil {
		claims["roles"] = u.Roles
	}
	for k, v := range u.Extra {
		claims[k] = v
	}

	if m.WrongNonce {
		claims["nonce"] = "not-" + g.nonce
	}
	if m.WrongAudience {
		claims["aud"] = "another-client"
	}
	if m.WrongIssuer {
		claims["iss"] = "https://issuer.invalid"
	}
	if m.Expired {
		claims["iat"] = now.Add(-2 * time.Hour).Unix()
		claims["exp"] = now.Add(-time.Hour).Unix()
	}

	key := s.key
	if m.SignWithOtherKey {
		var err error
		if key, err = s.impostorKey(); err != nil {
			return "", err
		}
	}
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: s.kid, Algorithm: string(jose.RS256)}},
		(&jose.SignerOptions{}).WithType("JWT"),
	)
	if err != nil {
		return "", fmt.Errorf("new signer: %w", err)
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// impostorKey returns a key that is not in the JWKS, made on first use.
func (s *Server) impostorKey() (*rsa.PrivateKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.otherKey == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generate impostor key: %w", err)
		}
		s.otherKey = k
	}
	return s.otherKey, nil
}
