package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// chatClient sends chat-completions requests. It is the little of an OpenAI client Parley
// needs: one POST, JSON in, a stream or one JSON object out, no retries. It sends what
// openai-go sent (client_test.go holds it to that) without linking openai-go, which was
// more than a third of the binary.
type chatClient struct {
	// url is <base URL>/chat/completions, joined as openai-go joined them.
	url    string
	apiKey string
	http   *http.Client
}

// newChatClient returns a client of the endpoint at base. Like openai-go it reads no
// environment (OPENAI_API_KEY and friends stay on this machine) and follows no redirect to
// another origin, which would take the API key and the conversation elsewhere.
func newChatClient(base, apiKey string, client *http.Client) (*chatClient, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	endpoint, err := u.Parse("chat/completions")
	if err != nil {
		return nil, err
	}
	c := *client
	follow := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(req.URL, u) {
			return errOtherOrigin
		}
		if follow != nil {
			return follow(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &chatClient{url: endpoint.String(), apiKey: apiKey, http: &c}, nil
}

// errOtherOrigin is why a redirect away from the base URL's origin is not followed.
var errOtherOrigin = errors.New("the endpoint redirected to another origin, which Parley does not follow")

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			return "443"
		case "http":
			return "80"
		}
		return ""
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// statusError is the error of an answer with status 400 or more. Faults are explained from
// what the watch kept of the answer (see requestFault), not from this error.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("the endpoint answered %d %s", e.code, http.StatusText(e.code))
}

// post sends body through the watch w and returns the answer, which is the caller's to
// close; an answer of status 400 or more is an error.
func (c *chatClient) post(ctx context.Context, body chatRequest, w *watch) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if body.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	// With a key of its own the request is idempotent to Go's client, which then sends it
	// again on a fresh connection when the kept-alive one it went out on turns out closed
	// before any answer (an endpoint's keep-alive timeout ran out while a question waited).
	// Without it Go retries no POST, and the run fails with "connection reset by peer".
	req.Header.Set("Idempotency-Key", idempotencyKey())
	res, err := w.do(req, c.http.Do)
	if ctx.Err() != nil {
		if err == nil {
			_ = res.Body.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		_ = res.Body.Close()
		return nil, &statusError{code: res.StatusCode}
	}
	return res, nil
}

// idempotencyKey is a fresh key for one request.
func idempotencyKey() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "parley-" + hex.EncodeToString(b)
}

// completion sends a request that does not stream and reads its reply, a chat.completion
// of which Parley reads the first choice's text and finish reason.
func (c *chatClient) completion(ctx context.Context, body chatRequest, w *watch) (completionReply, error) {
	res, err := c.post(ctx, body, w)
	if err != nil {
		return completionReply{}, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return completionReply{}, fmt.Errorf("error reading response body: %w", err)
	}
	ct := res.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); !strings.Contains(mt, "application/json") && !strings.HasSuffix(mt, "+json") {
		return completionReply{}, fmt.Errorf("expected a JSON answer, got content type %q", ct)
	}
	var r completionReply
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
		return completionReply{}, fmt.Errorf("error parsing response json: %w", err)
	}
	return r, nil
}
