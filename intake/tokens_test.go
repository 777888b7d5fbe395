package intake

import (
	"math"
	"os"
	"testing"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
		{"internationalization", 1 + 5 + 0}, // 20 letters: 1 + ceil(13/3)
		{"12345", 2},
		{"a, b", 3},
		{"  \n\n\t", 1},
		{"日本語", 3},
		{"größe", 2},
		{"🙂", 2},
	}
	for _, tt := range tests {
		if got := CountTokens(tt.text); got != tt.want {
			t.Errorf("CountTokens(%q): got %d, want %d", tt.text, got, tt.want)
		}
	}
}

// cl100k are the counts tiktoken's cl100k_base makes of the samples in testdata/tokens,
// measured with github.com/tiktoken-go/tokenizer v0.10.0 outside this module.
var cl100k = map[string]int{
	"chinese.txt": 138, "csv.txt": 190, "english.txt": 198, "french.txt": 98,
	"german.txt": 151, "gotrace.txt": 585, "json.txt": 181, "log.txt": 438,
	"python.txt": 124, "russian.txt": 105, "spec.txt": 134, "yaml.txt": 157,
}

func TestCountTokens_NearCl100k(t *testing.T) {
	var sum float64
	for file, want := range cl100k {
		b, err := os.ReadFile("testdata/tokens/" + file)
		if err != nil {
			t.Fatal(err)
		}
		got := CountTokens(string(b))
		rel := float64(got-want) / float64(want)
		sum += math.Abs(rel)
		if math.Abs(rel) > 0.20 {
			t.Errorf("%s: got %d tokens, cl100k %d (%+.0f%%)", file, got, want, 100*rel)
		}
		t.Logf("%-12s cl100k %4d estimate %4d %+5.1f%%", file, want, got, 100*rel)
	}
	if mean := sum / float64(len(cl100k)); mean > 0.10 {
		t.Errorf("mean error %.1f%%, want at most 10%%", 100*mean)
	}
}

func BenchmarkCountTokens(b *testing.B) {
	text := appLog(2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		CountTokens(text)
	}
}
