package views

import (
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []string
		forbidden []string
	}{
		{"emphasis and lists", "**bold** and *it*\n\n- one\n- two", []string{"<strong>bold</strong>", "<li>one</li>"}, nil},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
		{"code fence", "```go\nfmt.Println(1)\n```", []string{`<code class="language-go">`}, nil},
		{"script", "hi <script>alert(1)</script>", []string{"hi"}, []string{"<script", "alert(1)</script>"}},
		{"datastar attributes", `<div data-on:click="@post('/x')" data-init="@get('/y')">x</div>`, nil, []string{"data-", "@post"}},
		{"event handlers and style", `<img src="x.png" onerror="alert(1)" style="color:red" id="thread">`, nil, []string{"onerror", "style", "id="}},
		{"javascript link", `[click](javascript:alert(1))`, nil, []string{"javascript:"}},
		{"link", `[docs](https://example.com)`, []string{`href="https://example.com"`, `rel="nofollow`}, nil},
		{"raw html form", `<form action="/x"><input name="a"></form>`, nil, []string{"<form", `name="a"`}},
		{"iframe", `<iframe src="https://evil"></iframe>`, nil, []string{"<iframe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Markdown(tt.in)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Markdown(%q) = %q, want it to contain %q", tt.in, got, w)
				}
			}
			for _, f := range tt.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("Markdown(%q) = %q, must not contain %q", tt.in, got, f)
				}
			}
		})
	}
}
