package views_test

import (
	"testing"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/views"
)

// BenchmarkMarkdownStream_Token is what rendering costs a streaming message per token, for a
// reply of the Markdown models write (builtin.BenchReply, in tokens of 3.4 bytes).
func BenchmarkMarkdownStream_Token(b *testing.B) {
	toks := builtin.BenchTokens(2000)
	b.ReportAllocs()
	b.ResetTimer()
	var m views.MarkdownStream
	for i := 0; i < b.N; i++ {
		if i%len(toks) == 0 {
			m = views.MarkdownStream{}
		}
		m.Write(toks[i%len(toks)])
	}
}
