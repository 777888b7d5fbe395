package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZip", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0", false},
		{"*", true},
		{"*;q=0", false},
		{"*, gzip;q=0", false},
		{"gzip;q=0, *", false},
		{"br, deflate", false},
		{"identity", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.header != "" {
			r.Header.Set("Accept-Encoding", tc.header)
		}
		if got := accepts(r, "gzip"); got != tc.want {
			t.Errorf("accepts(%q, gzip) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// compressed runs h under compressResponses for a client that takes gzip.
func compressed(t *testing.T, h http.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	compressResponses(h).ServeHTTP(w, r)
	return w
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompressResponses(t *testing.T) {
	page := []byte(strings.Repeat("<p>Parley</p>\n", 200))
	t.Run("ALongPageInPieces", func(t *testing.T) {
		w := compressed(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			for p := range bytes.SplitAfterSeq(page, []byte("\n")) {
				w.Write(p)
			}
		})
		if ce := w.Header().Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("Content-Encoding = %q, want gzip", ce)
		}
		if v := w.Header().Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("Vary = %q", v)
		}
		if got := gunzip(t, w.Body.Bytes()); !bytes.Equal(got, page) {
			t.Errorf("decoded %d bytes, want the page's %d", len(got), len(page))
		}
	})
	t.Run("AKnownLengthDropsIt", func(t *testing.T) {
		w := compressed(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			w.Header().Set("ETag", `"abc"`)
			w.Write(page)
		})
		h := w.Header()
		if h.Get("Content-Encoding") != "gzip" || h.Get("Content-Length") != "" || h.Get("ETag") != `W/"abc"` {
			t.Errorf("headers = %v, want gzip, no length, a weak ETag", h)
		}
	})
	t.Run("AsTheyAre", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			header http.Header
			status int
			body   []byte
		}{
			{"short", http.Header{"Content-Type": {"text/html"}}, 200, page[:500]},
			{"short by its length", http.Header{"Content-Type": {"text/html"}, "Content-Length": {"20"}}, 200, page[:20]},
			{"an image", http.Header{"Content-Type": {"image/png"}}, 200, page},
			{"plain text", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, 200, page},
			{"no type", http.Header{}, 200, page},
			{"already encoded", http.Header{"Content-Type": {"text/css"}, "Content-Encoding": {"br"}}, 200, page},
			{"a range", http.Header{"Content-Type": {"text/css"}}, http.StatusPartialContent, page},
			{"SSE", http.Header{"Content-Type": {"text/event-stream"}}, 200, page},
		} {
			w := compressed(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tc.status)
				w.Write(tc.body)
			})
			if got := w.Body.Bytes(); !bytes.Equal(got, tc.body) || w.Header().Get("Content-Encoding") != tc.header.Get("Content-Encoding") {
				t.Errorf("%s: sent %d bytes encoded %q, want it as it is", tc.name, len(got), w.Header().Get("Content-Encoding"))
			}
			if w.Code != tc.status {
				t.Errorf("%s: status %d, want %d", tc.name, w.Code, tc.status)
			}
		}
	})
	t.Run("NotAccepted", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", "gzip;q=0, br")
		w := httptest.NewRecorder()
		compressResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write(page)
		})).ServeHTTP(w, r)
		if !bytes.Equal(w.Body.Bytes(), page) || w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("sent %d bytes, Vary %q; want the page as it is, varying", w.Body.Len(), w.Header().Get("Vary"))
		}
	})
	t.Run("AnEmptyPage", func(t *testing.T) {
		w := compressed(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
		})
		if w.Code != http.StatusNotFound || w.Body.Len() != 0 || w.Header().Get("Content-Encoding") != "" {
			t.Errorf("= %d %q %q", w.Code, w.Body.Bytes(), w.Header().Get("Content-Encoding"))
		}
	})
}

// Each event of a stream reaches the client when it is flushed, as it was written, however
// long: an SSE response is never compressed, and a flush sends what was held.
func TestCompressResponses_FlushesGoOut(t *testing.T) {
	event := "event: datastar-patch-elements\ndata: elements " + strings.Repeat("<li>x</li>", 200) + "\n\n"
	for _, ctype := range []string{"text/event-stream", "application/json"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		compressResponses(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", ctype)
			rc := http.NewResponseController(rw)
			if err := rc.Flush(); err != nil { // the header first, as datastar.NewSSE does
				t.Fatal(err)
			}
			for i := range 3 {
				msg := strconv.Itoa(i) + event
				if ctype == "application/json" && i == 0 {
					msg = `{"short":1}` // flushed before it is long enough to tell
				}
				io.WriteString(rw, msg)
				if err := rc.Flush(); err != nil {
					t.Fatal(err)
				}
				if !strings.HasSuffix(w.Body.String(), msg) {
					t.Fatalf("%s: after flush %d the client has %d bytes, not the event", ctype, i, w.Body.Len())
				}
			}
		})).ServeHTTP(w, r)
		if w.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: Content-Encoding %q", ctype, w.Header().Get("Content-Encoding"))
		}
	}
}
