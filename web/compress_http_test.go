package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// fetch GETs url sending Accept-Encoding as given (none when ""), and returns the response
// and its body as it came, not decoded.
func fetch(t *testing.T, client *http.Client, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %.200s", url, resp.StatusCode, b)
	}
	return resp, b
}

// rawClient sends no Accept-Encoding of its own and decodes nothing.
func rawClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// decoded is body decoded from the encoding.
func decoded(t *testing.T, encoding string, body []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	switch encoding {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	default:
		t.Fatalf("unexpected Content-Encoding %q", encoding)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", encoding, err)
	}
	return b
}

// drawn is what differs each time a page is drawn: its forms' nonces, and the count of the
// sidebar's changes its stream starts from (which moves on a while after a reply).
var drawn = regexp.MustCompile(`nonce(" value="|=)[0-9a-f]+|&amp;v=[0-9]+`)

// A page, the stylesheets and the scripts go out compressed to a client that takes it, and
// decode to what a client that does not gets. Pages are gzipped as they are written; the
// static files are compressed once, brotli as well.
func TestCompression_PagesAndAssets(t *testing.T) {
	done := make(chan struct{})
	close(done)
	ts := newTestServer(t, newDB(t), gatedAgent([]string{"Hello."}, done))
	conv := ts.start(t, "gated", "plan")
	ts.waitState(t, 1, domain.StateDone) // the page drawn the same each time
	client := rawClient(t)
	for _, tc := range []struct {
		path   string
		brotli bool
	}{
		{conv, false},
		{"/", false},
		{"/static/app.css", true},
		{"/static/code.css", true},
		{"/static/app.js", true},
		{"/static/shell.js", true},
		{"/static/datastar.js", true},
		{"/sw.js", true},
	} {
		resp, plain := fetch(t, client, ts.URL+tc.path, "")
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%s without Accept-Encoding: Content-Encoding %q", tc.path, ce)
		}
		if v := resp.Header.Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("%s: Vary %q", tc.path, v)
		}
		want := drawn.ReplaceAll(plain, nil)
		for _, ae := range []string{"gzip", "br", "br, gzip", "gzip, deflate, br, zstd"} {
			resp, body := fetch(t, client, ts.URL+tc.path, ae)
			wantCE := "gzip"
			if strings.Contains(ae, "br") && tc.brotli {
				wantCE = "br"
			} else if ae == "br" {
				wantCE = ""
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != wantCE {
				t.Errorf("%s with %q: Content-Encoding %q, want %q", tc.path, ae, ce, wantCE)
				continue
			}
			if got := drawn.ReplaceAll(decoded(t, wantCE, body), nil); !bytes.Equal(got, want) {
				t.Errorf("%s with %q decodes to %d bytes unlike the %d sent plain", tc.path, ae, len(got), len(want))
			}
			if wantCE != "" && len(body) >= len(plain) {
				t.Errorf("%s with %q: %d bytes for %d", tc.path, ae, len(body), len(plain))
			}
		}
	}
}

// The static files keep their validators: each encoding has its own ETag, and a browser
// that has the file gets a 304.
func TestCompression_StaticRevalidates(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	client := rawClient(t)
	tags := map[string]bool{}
	for _, ae := range []string{"", "gzip", "br"} {
		resp, _ := fetch(t, client, ts.URL+"/sw.js", ae)
		etag := resp.Header.Get("ETag")
		if etag == "" || tags[etag] {
			t.Fatalf("with %q: ETag %q, want one of its own", ae, etag)
		}
		tags[etag] = true
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/sw.js", nil)
		req.Header.Set("Accept-Encoding", ae)
		req.Header.Set("If-None-Match", etag)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("with %q and If-None-Match: %d, want 304", ae, resp.StatusCode)
		}
	}
	// A range is of the file as it is.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/static/app.css", nil)
	req.Header.Set("Range", "bytes=0-9")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || len(b) != 10 {
		t.Errorf("a range = %d, %d bytes", resp.StatusCode, len(b))
	}
	// Files that are small or already compressed go as they are.
	for _, path := range []string{"/static/favicon.svg", "/static/icon-192.png", "/healthz"} {
		resp, _ := fetch(t, client, ts.URL+path, "gzip, br")
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%s: Content-Encoding %q", path, ce)
		}
	}
	if code, _ := ts.get(t, "/static/nothing.js"); code != http.StatusNotFound {
		t.Errorf("a file that is not there = %d", code)
	}
	if code, _ := ts.get(t, "/static/"); code != http.StatusNotFound {
		t.Errorf("the folder = %d, want 404 (no listing)", code)
	}
}

// openStream opens an SSE stream with client, saying it takes gzip and brotli; the stream
// must come uncompressed.
func openStream(t *testing.T, client *http.Client, url string, header ...string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" {
		t.Fatalf("GET %s: the stream is encoded %q", url, ce)
	}
	return newSSEReader(t, resp)
}

// A page's stream is never compressed, over HTTP/1.1 (the stream takes the connection
// over) and HTTP/2 (it is written through the response), and each piece of a reply
// arrives before the agent writes the next.
func TestCompression_PageStreamIsNot(t *testing.T) {
	pieces := []string{"Here ", "is ", "the ", "plan", "."}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			gate := make(chan struct{})
			ts := newTestServer(t, newDB(t), gatedAgent(pieces, gate))
			conv := ts.start(t, "gated", "plan")
			url, client := ts.URL, rawClient(t)
			if proto == "HTTP/2.0" {
				h2 := httptest.NewUnstartedServer(ts.srv)
				h2.EnableHTTP2 = true
				h2.StartTLS()
				t.Cleanup(h2.Close)
				url, client = h2.URL, h2.Client()
			}
			s := openStream(t, client, url+conv+"/stream?after=0")
			if s.resp.Proto != proto {
				t.Fatalf("the stream came over %s", s.resp.Proto)
			}
			g := &growing{t: t}
			for i := range pieces {
				gate <- struct{}{}
				s.until(g, isMarkdown)
				if got, want := g.html(), strings.Join(pieces[:i+1], ""); !strings.Contains(tags.ReplaceAllString(got, ""), want) {
					t.Fatalf("after piece %d the page shows %q, want %q", i, got, want)
				}
			}
		})
	}
}

// tags are the markup of a message, around its text.
var tags = regexp.MustCompile(`<[^>]*>`)

// The API's event stream is never compressed either, and its deltas arrive one by one.
func TestCompression_APIStreamIsNot(t *testing.T) {
	gate := make(chan struct{})
	as := newAccountsServer(t, web.AuthOptions{}, web.Limits{}, gatedAgent([]string{"Hello ", "wide ", "world."}, gate))
	ann := as.token(t, "ann")
	var started apiConv
	ann.json("POST", "/api/v1/conversations", api.NewConversation{Agent: "gated", Text: "hi"}, 201, &started)
	r := openStream(t, rawClient(t), fmt.Sprintf("%s/api/v1/conversations/%d/events", as.URL, started.Conversation.ID), "Authorization", "Bearer "+ann.token)
	for _, want := range []string{"Hello ", "wide "} { // the last may come with the end
		gate <- struct{}{}
		ev := nextOf(t, r, "message.delta", "message.done", "run.state")
		if d := decode[api.Delta](t, ev); d.Text != want {
			t.Fatalf("delta %q, want %q", d.Text, want)
		}
	}
}
