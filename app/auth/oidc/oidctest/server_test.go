package oidctest_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"netmon/app/auth/oidc/oidctest"
)

const redirect = "http://hub.example/api/auth/oidc/callback"

// authorize sends an authorization request with params over the defaults
// and returns the status and the redirect's query (nil when none).
func authorize(t *testing.T, s *oidctest.Server, params map[string]string) (int, url.Values) {
	t.Helper()
	q := url.Values{
		"client_id":             {s.ClientID},
		"redirect_uri":          {redirect},
		"response_type":         {"code"},
		"scope":                 {"openid email"},
		"state":                 {"st"},
		"nonce":                 {"n0"},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier("verifier-0123456789-0123456789-0123456789")},
		"code_challenge_method": {"S256"},
	}
	for k, v := range params {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	c := s.HTTPClient()
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(s.Issuer() + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return resp.StatusCode, nil
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirect {
		t.Fatalf("redirected to %s, want %s", got, redirect)
	}
	return resp.StatusCode, loc.Query()
}

// redeem posts form to /token, with client_secret_basic when basic.
func redeem(t *testing.T, s *oidctest.Server, form url.Values, basic bool, secret string) (int, map[string]any) {
	t.Helper()
	if !basic {
		form.Set("client_id", s.ClientID)
		form.Set("client_secret", secret)
	}
	req, err := http.NewRequest(http.MethodPost, s.Issuer()+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(s.ClientID), url.QueryEscape(secret))
	}
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestAuthorize(t *testing.T) {
	tests := []struct {
		name       string
		params     map[string]string
		mis        oidctest.Misbehaviour
		wantStatus int
		wantError  string // error parameter of the redirect; "" with a code
	}{
		{"approved", nil, oidctest.Misbehaviour{}, http.StatusFound, ""},
		{"unknown client: no redirect", map[string]string{"client_id": "evil"}, oidctest.Misbehaviour{}, http.StatusBadRequest, ""},
		{"relative redirect_uri: no redirect", map[string]string{"redirect_uri": "/cb"}, oidctest.Misbehaviour{}, http.StatusBadRequest, ""},
		{"implicit flow refused", map[string]string{"response_type": "token"}, oidctest.Misbehaviour{}, http.StatusFound, "unsupported_response_type"},
		{"PKCE missing", map[string]string{"code_challenge": ""}, oidctest.Misbehaviour{}, http.StatusFound, "invalid_request"},
		{"PKCE plain", map[string]string{"code_challenge_method": "plain"}, oidctest.Misbehaviour{}, http.StatusFound, "invalid_request"},
		{"openid scope missing", map[string]string{"scope": "email"}, oidctest.Misbehaviour{}, http.StatusFound, "invalid_scope"},
		{"provider error", nil, oidctest.Misbehaviour{ProviderError: true}, http.StatusFound, "access_denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := oidctest.NewServer(t)
			s.SetMisbehaviour(tt.mis)
			status, q := authorize(t, s, tt.params)
			type result struct {
				Status       int
				Error, State string
				HasCode      bool
			}
			got := result{Status: status}
			want := result{Status: tt.wantStatus}
			if q != nil {
				got.Error, got.State, got.HasCode = q.Get("error"), q.Get("state"), q.Get("code") != ""
				want.Error, want.State, want.HasCode = tt.wantError, "st", tt.wantError == ""
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("authorize (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestToken(t *testing.T) {
	const verifier = "verifier-0123456789-0123456789-0123456789"
	tests := []struct {
		name       string
		basic      bool
		edit       func(s *oidctest.Server, form url.Values) (secret string)
		replay     bool
		wantStatus int
		wantError  string // "" = tokens
	}{
		{"basic auth", true, nil, false, http.StatusOK, ""},
		{"post auth", false, nil, false, http.StatusOK, ""},
		{"wrong secret (basic)", true, func(*oidctest.Server, url.Values) string { return "nope" }, false, http.StatusUnauthorized, "invalid_client"},
		{"wrong secret (post)", false, func(*oidctest.Server, url.Values) string { return "nope" }, false, http.StatusUnauthorized, "invalid_client"},
		{"other grant type", true, func(_ *oidctest.Server, f url.Values) string { f.Set("grant_type", "password"); return "" }, false, http.StatusBadRequest, "unsupported_grant_type"},
		{"other redirect_uri", true, func(_ *oidctest.Server, f url.Values) string { f.Set("redirect_uri", redirect+"x"); return "" }, false, http.StatusBadRequest, "invalid_grant"},
		{"wrong verifier", true, func(_ *oidctest.Server, f url.Values) string { f.Set("code_verifier", verifier+"x"); return "" }, false, http.StatusBadRequest, "invalid_grant"},
		{"no verifier", true, func(_ *oidctest.Server, f url.Values) string { f.Del("code_verifier"); return "" }, false, http.StatusBadRequest, "invalid_grant"},
		{"unknown code", true, func(_ *oidctest.Server, f url.Values) string { f.Set("code", "forged"); return "" }, false, http.StatusBadRequest, "invalid_grant"},
		{"replayed code", true, nil, true, http.StatusBadRequest, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := oidctest.NewServer(t)
			_, q := authorize(t, s, nil)
			form := url.Values{
				"grant_type":    {"authorization_code"},
				"code":          {q.Get("code")},
				"redirect_uri":  {redirect},
				"code_verifier": {verifier},
			}
			secret := s.ClientSecret
			if tt.edit != nil {
				if s := tt.edit(s, form); s != "" {
					secret = s
				}
			}
			if tt.replay {
				if status, _ := redeem(t, s, maps.Clone(form), tt.basic, secret); status != http.StatusOK {
					t.Fatalf("first redemption: status %d", status)
				}
			}
			status, body := redeem(t, s, form, tt.basic, secret)
			type result struct {
				Status     int
				Error      string
				HasIDToken bool
			}
			got := result{Status: status, HasIDToken: body["id_token"] != nil}
			got.Error, _ = body["error"].(string)
			want := result{Status: tt.wantStatus, Error: tt.wantError, HasIDToken: tt.wantError == ""}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("token (-got, +want):\n%s", diff)
			}
		})
	}
}

// The ID token verifies with go-oidc through discovery and JWKS, and
// carries the user's claims and the nonce.
func TestIDTokenVerifies(t *testing.T) {
	s := oidctest.NewServer(t)
	s.SetUser(oidctest.User{Subject: "s-1", Email: "e@example.com", PreferredUsername: "e", Name: "E",
		Groups: []string{"g1"}, Roles: []string{"r1"}})
	ctx := oidc.ClientContext(context.Background(), s.HTTPClient())
	p, err := oidc.NewProvider(ctx, s.Issuer())
	if err != nil {
		t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: []string{"openid"}}
	verifier := oauth2.GenerateVerifier()
	_, q := authorize(t, s, map[string]string{"code_challenge": oauth2.S256ChallengeFromVerifier(verifier)})
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.ClientID}).Verify(ctx, tok.Extra("id_token").(string))
	if err != nil {
		t.Fatal(err)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}
	var got map[string]any
	if err := idt.Claims(&got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"iat", "exp", "auth_time", "at_hash"} {
		delete(got, k)
	}
	want := map[string]any{
		"iss": s.Issuer(), "sub": "s-1", "aud": s.ClientID, "nonce": "n0",
		"email": "e@example.com", "email_verified": true, "preferred_username": "e", "name": "E",
		"groups": []any{"g1"}, "roles": []any{"r1"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("claims (-got, +want):\n%s", diff)
	}
}
