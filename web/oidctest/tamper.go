package oidctest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// tamperTokenResponse wraps the op handler. While a tamper function is armed it
// buffers token endpoint responses and rewrites the id_token of the first
// successful one.
func tamperTokenResponse(st *storage, next http.Handler) http.Handler {
	tokenPath := op.DefaultEndpoints.Token.Relative() // "/oauth/token"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := st.failure(r.URL.Path); code != 0 {
			http.Error(w, "oidctest: this endpoint is down", code)
			return
		}
		if r.URL.Path != tokenPath || !st.tamperArmed() {
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
		next.ServeHTTP(buf, r)
		body := buf.body.Bytes()
		if buf.code == http.StatusOK {
			if f := st.takeTamper(); f != nil {
				if b, err := rewriteIDToken(st, body, f); err == nil {
					body = b
				} else {
					http.Error(w, "oidctest: tamper: "+err.Error(), http.StatusInternalServerError)
					return
				}
			}
		}
		for k, v := range buf.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(buf.code)
		_, _ = w.Write(body)
	})
}

// The endpoints Provider.Fail can take down.
var (
	PathToken = op.DefaultEndpoints.Token.Relative()
	PathKeys  = op.DefaultEndpoints.JwksURI.Relative()
)

func (s *storage) failure(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing[path]
}

func (s *storage) fail(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string]int{}
	}
	s.failing[path] = status
}

type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

func rewriteIDToken(st *storage, body []byte, f func(map[string]any)) ([]byte, error) {
	var resp map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&resp); err != nil {
		return nil, err
	}
	raw, _ := resp["id_token"].(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, errors.New("no id_token in the token response")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	dec = json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, err
	}
	f(claims)
	payload, err = json.Marshal(claims)
	if err != nil {
		return nil, err
	}
	key, _ := st.SigningKey(context.Background())
	signer, err := op.SignerFromKey(key)
	if err != nil {
		return nil, err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return nil, err
	}
	if resp["id_token"], err = jws.CompactSerialize(); err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}
