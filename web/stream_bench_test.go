package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/agent"
)

// BenchmarkStreamLongAnswer streams a 2,000-token answer and reports the bytes the browser
// receives per byte of text: appending keeps it a small constant, where re-sending the
// growing message per token would grow with the answer's length.
func BenchmarkStreamLongAnswer(b *testing.B) {
	const tokens = 2000
	words := make([]string, tokens)
	for i := range words {
		words[i] = fmt.Sprintf("word%d ", i%97)
	}
	text := strings.Join(words, "")
	long := &scripted{name: "long", step: func(ctx context.Context, in agent.StepInput, out agent.Output) error {
		for _, w := range words {
			if err := out.Text(w); err != nil {
				return err
			}
		}
		return nil
	}}
	ts := newTestServer(b, newDB(b), long)
	b.ResetTimer()
	var streamed int64
	for i := 0; i < b.N; i++ {
		path := ts.start(b, "long", "go")
		ts.waitState(b, convID(b, path), agent.StateDone)
		resp, err := http.Get(ts.URL + path + "/stream?after=0")
		if err != nil {
			b.Fatal(err)
		}
		// Read until the finished message's re-render (the last patch) has arrived.
		buf := make([]byte, 32<<10)
		var got strings.Builder
		for !strings.Contains(got.String(), "state state-done") {
			n, err := resp.Body.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
		}
		resp.Body.Close()
		streamed += int64(got.Len())
	}
	b.ReportMetric(float64(streamed)/float64(b.N)/float64(len(text)), "sse-bytes/text-byte")
	b.ReportMetric(float64(streamed)/float64(b.N)/tokens, "sse-bytes/token")
}
