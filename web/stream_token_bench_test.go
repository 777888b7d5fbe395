package web

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
)

// discardWriter is a ResponseWriter that keeps nothing but the count of bytes.
type discardWriter struct {
	h http.Header
	n int64
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *discardWriter) Flush()                      {}

// BenchmarkStream_Token is the stream's own work for one token, the write to the network
// aside: the hub takes it from the agent, the stream reads it, renders the Markdown and
// writes the event: for the Markdown models write (builtin.BenchReply, in tokens of 3.4
// bytes), and for plain prose, which most tokens are.
func BenchmarkStream_Token(b *testing.B) {
	b.Run("Markdown", func(b *testing.B) { benchmarkStreamTokens(b, builtin.BenchTokens(2000)) })
	var prose []string
	for i := range 2000 {
		prose = append(prose, []string{" The", " build", " passed", " again", ",", " and", " then", " it", " shipped", "."}[i%10])
	}
	b.Run("Prose", func(b *testing.B) { benchmarkStreamTokens(b, prose) })
}

func benchmarkStreamTokens(b *testing.B, toks []string) {
	hub := runner.NewHub()
	w := &discardWriter{h: http.Header{}}
	ls := &liveStream{s: &Server{}, ctx: context.Background(), w: newSSEWriter(w), conv: domain.Conversation{ID: 1}}
	f := hub.Follow(1)
	defer f.Close()
	text := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tok := toks[i%len(toks)]
		if i%len(toks) == 0 {
			// A new message: the one before ends.
			hub.Publish([]domain.Event{{ID: int64(i + 1), ConversationID: 1, Kind: domain.EventRunState, State: domain.StateDone}})
			ls.Cur, ls.md = runner.Cursor{Event: int64(i + 1)}, nil
		}
		hub.Write(1, fmt.Sprint("m", i/len(toks)), "Bench", tok)
		text += len(tok)
		<-f.Wake()
		if err := ls.catchUp(f); err != nil {
			b.Fatal(err)
		}
		if err := ls.w.flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.n)/float64(text), "sse-bytes/text-byte")
}
