package upstreamtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenServer is the OAuth2 token endpoint of the service accounts the
// server made (ServiceAccount): it grants an access token for a JWT
// assertion (RFC 7523) signed by the account's key, as Google's does.
type tokenServer struct {
	mu       sync.Mutex
	accounts map[string]*rsa.PublicKey // by client_email
	tokens   map[string]bool
	requests int
	// fail, when not 0, is the status every token request is answered
	// with (an OAuth2 error body).
	fail int
}

func newTokenServer() *tokenServer {
	return &tokenServer{accounts: map[string]*rsa.PublicKey{}, tokens: map[string]bool{}}
}

// ServiceAccount makes a service account and returns its JSON key file,
// whose token_uri is this server's token endpoint: the credentials a
// Vertex AI model's credentials_env names.
func (s *Server) ServiceAccount(name string) ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	email := name + "@arr-test.iam.gserviceaccount.com"
	s.tok.mu.Lock()
	s.tok.accounts[email] = &key.PublicKey
	s.tok.mu.Unlock()
	return json.Marshal(map[string]string{"type": "service_account", "project_id": "arr-test", "private_key_id": "k-" + name,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email,
		"client_id": "1", "token_uri": s.root + "/token"})
}

// SetTokenFailure makes the token endpoint answer every request with
// status (0: grant tokens again).
func (s *Server) SetTokenFailure(status int) {
	s.tok.mu.Lock()
	defer s.tok.mu.Unlock()
	s.tok.fail = status
}

// TokenRequests returns how many token requests came.
func (s *Server) TokenRequests() int {
	s.tok.mu.Lock()
	defer s.tok.mu.Unlock()
	return s.tok.requests
}

// RevokeTokens makes every access token granted so far invalid.
func (s *Server) RevokeTokens() {
	s.tok.mu.Lock()
	defer s.tok.mu.Unlock()
	s.tok.tokens = map[string]bool{}
}

// validToken: tok is an access token the endpoint granted.
func (t *tokenServer) validToken(tok string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tokens[tok]
}

// token answers POST /token: grant_type jwt-bearer and an assertion
// whose RS256 signature is the key of an account the server made, issued
// by it, for this endpoint, with the cloud-platform scope, not expired.
func (t *tokenServer) token(w http.ResponseWriter, r *http.Request) {
	oauthError := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	t.mu.Lock()
	t.requests++
	fail := t.fail
	t.mu.Unlock()
	if fail != 0 {
		oauthError(fail, "temporarily_unavailable", "injected failure")
		return
	}
	if r.PostFormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type is not jwt-bearer")
		return
	}
	if err := t.verify(r.PostFormValue("assertion"), "http://"+r.Host+"/token"); err != nil {
		oauthError(http.StatusBadRequest, "invalid_grant", err.Error())
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := "ya29.test-" + base64.RawURLEncoding.EncodeToString(b)
	t.mu.Lock()
	t.tokens[tok] = true
	t.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

// verify checks a JWT assertion.
func (t *tokenServer) verify(assertion, aud string) error {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return errors.New("the assertion is not a JWT")
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &claims) != nil {
		return errors.New("the assertion's claims are not base64url JSON")
	}
	t.mu.Lock()
	pub := t.accounts[claims.Iss]
	t.mu.Unlock()
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if pub == nil || err != nil {
		return fmt.Errorf("no service account %q", claims.Iss)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch {
	case rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil:
		return errors.New("invalid JWT signature")
	case claims.Aud != aud:
		return fmt.Errorf("the assertion's audience is %q, not %q", claims.Aud, aud)
	case !strings.Contains(" "+claims.Scope+" ", " https://www.googleapis.com/auth/cloud-platform "):
		return fmt.Errorf("the assertion's scope %q lacks cloud-platform", claims.Scope)
	case claims.Exp < time.Now().Unix():
		return errors.New("the assertion has expired")
	}
	return nil
}
