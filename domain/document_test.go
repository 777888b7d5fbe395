package domain_test

import (
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestDocument_Readable(t *testing.T) {
	tests := []struct {
		mime    string
		content string
		want    bool
	}{
		{"text/x-log", "12:00 start\n", true},
		{"application/sql", "SELECT 1;\n", true},
		{"application/javascript", "let a = 1\n", true},
		{"application/x-sh", "echo hi\n", true},
		{"application/vnd.api+json", "{}", true},
		// A type that names no text, holding text, reads as text.
		{"application/x-unknown-script", "puts 'hi'\n", true},
		{"image/png", "\x89PNG\r\n\x1a\n\x00\x00", false},
		{"application/octet-stream", "caf\xe9", false},
		{"application/octet-stream", "a\x00b", false},
	}
	for _, tt := range tests {
		d := domain.Document{DocumentRef: domain.DocumentRef{MimeType: tt.mime}, Content: []byte(tt.content)}
		if got := d.Readable(); got != tt.want {
			t.Errorf("Readable(%s %q) = %v, want %v", tt.mime, tt.content, got, tt.want)
		}
	}
	// The end of a long document may cut a rune: the sampled head still reads as text.
	long := make([]byte, 0, 9000)
	for len(long) < 8190 {
		long = append(long, "é"...)
	}
	if d := (domain.Document{DocumentRef: domain.DocumentRef{MimeType: "application/x-foo"}, Content: append(long, "éé"...)}); !d.Readable() {
		t.Error("a long UTF-8 document whose sample ends inside a rune is not readable")
	}
}
