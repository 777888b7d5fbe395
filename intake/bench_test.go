package intake

import (
	"strings"
	"testing"
)

// BenchmarkSplit measures the built-in splitter on a 2,000-line log with a question (about
// 250 KB) and on a 1 MB message of prose, code, logs, JSON and tables.
func BenchmarkSplit(b *testing.B) {
	mixed := func() string {
		var sb strings.Builder
		for i := 0; sb.Len() < 1<<20; i++ {
			sb.WriteString("Here is what happened on run " + strings.Repeat("x", i%5) + ", can you tell me why?\n\n")
			sb.WriteString(goBlock(i) + "\n\n")
			sb.WriteString(appLog(40) + "\n\n")
			sb.WriteString(webhook + "\n\n")
			sb.WriteString(payments + "\n\n")
			sb.WriteString(javaTrace + "\n\n")
		}
		return sb.String()
	}()
	for _, bm := range []struct{ name, text string }{
		{"Log2000Lines", "Why do we get 'ledger closed' errors?\n" + appLog(2000)},
		{"Mixed1MB", mixed},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(bm.text)))
			b.ReportAllocs()
			for b.Loop() {
				Split(bm.text)
			}
		})
	}
}
