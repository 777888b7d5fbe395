package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// A component that fails to render is logged, and no patch is made of it.
func TestHTML_RenderErrorIsLogged(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	broken := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		io.WriteString(w, "<div>half")
		return errors.New("the view could not read its data")
	})
	h, err := s.html(context.Background(), broken)
	if err == nil || h != "" {
		t.Fatalf("html = %q, %v; want nothing and the error", h, err)
	}
	if !strings.Contains(logs.String(), "level=ERROR msg=render") || !strings.Contains(logs.String(), "the view could not read its data") {
		t.Errorf("log %q lacks the render error", logs.String())
	}
	// On a stream, nothing is sent for it.
	w := &discardWriter{h: map[string][]string{}}
	ls := &liveStream{s: s, ctx: context.Background(), w: newSSEWriter(w)}
	ls.patch(broken, "#thread", "append", "7")
	if len(ls.w.buf) != 0 {
		t.Errorf("a failed render was sent: %q", ls.w.buf)
	}
}
