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
		t.Run(tt.name, func(t *testing.T) { checkMarkdown(t, tt.in, tt.want, tt.forbidden) })
	}
}

func TestMarkdown_CodeBlocks(t *testing.T) {
	const head = `<div class="code-head"><span class="code-lang">go</span>` +
		`<button type="button" class="copy" aria-label="Copy code">Copy</button></div>` +
		`<pre class="chroma" tabindex="0" role="group" aria-label="go code"><code class="language-go">`
	tests := []struct {
		name      string
		in        string
		want      []string
		forbidden []string
	}{
		{"go is highlighted", "```go\nfunc main() {\n\tfmt.Println(\"<hi>\") // done\n}\n```",
			[]string{head + `<span class="kd">func</span> <span class="nf">main</span>`, `<span class="s">&#34;&lt;hi&gt;&#34;</span>`, `<span class="c1">// done</span>`, "</code></pre>"},
			[]string{"style=", "<hi>"}},
		{"python", "```python\ndef f(x):\n    return x\n```", []string{`<span class="k">def</span>`, `aria-label="python code"`}, []string{"style="}},
		{"json", "```json\n{\"a\": [1, null]}\n```", []string{`<span class="nt">&#34;a&#34;</span>`, `<span class="kc">null</span>`}, nil},
		{"unknown language stays plain", "```klingon\nqapla' batlh\n```",
			[]string{`<span class="code-lang">klingon</span>`, `aria-label="klingon code"`, `<code class="language-klingon">qapla&#39; batlh` + "\n</code></pre>"},
			[]string{"<span class=\"k", "<span class=\"n"}},
		{"no language is not guessed", "```\nfunc main() {}\n```",
			[]string{`<div class="code-head"><button type="button" class="copy" aria-label="Copy code">Copy</button></div>` +
				`<pre class="chroma" tabindex="0" role="group" aria-label="Code"><code>func main() {}` + "\n</code></pre>"},
			[]string{"<span", "code-lang"}},
		{"indented code", "    x := 1", []string{`aria-label="Code"><code>x := 1`}, []string{"<span"}},
		{"unclosed fence", "```go\nfunc", []string{`<span class="kd">func</span>`}, nil},
		{"a language name the page does not show", "```\"><b>x\nhi\n```", []string{`aria-label="Code"><code>hi`}, []string{"<b>", "code-lang"}},
		{"html in code is text", "```html\n<button onclick=\"x()\">Copy</button>\n```", []string{"&lt;", `<span class="nt">button</span>`}, []string{"<button onclick", `onclick="`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMarkdown(t, tt.in, tt.want, tt.forbidden) })
	}
}

// Every code block, fenced or indented, in a list or a quote, has one head with one copy
// button, right before its <pre>.
func TestMarkdown_CopyButtonPerBlock(t *testing.T) {
	in := "```go\na := 1\n```\n\nText.\n\n    indented\n\n1. Step\n   ```sh\n   make\n   ```\n\n> ```\n> quoted\n> ```\n"
	got := Markdown(in)
	button := `<button type="button" class="copy" aria-label="Copy code">Copy</button></div><pre `
	if n, pres := strings.Count(got, button), strings.Count(got, "<pre"); n != 4 || pres != 4 || strings.Count(got, "<button") != 4 {
		t.Errorf("%d copy buttons before %d code blocks, want 4 of each: %s", n, pres, got)
	}
	if strings.Count(got, `tabindex="0"`) != 4 {
		t.Errorf("want every <pre> focusable: %s", got)
	}
}

// Agent HTML cannot pass for ours: raw HTML is dropped, and the policy (were it let through)
// strips the attributes and elements of our code blocks and checkboxes.
func TestMarkdown_AgentCannotForgeTrustedHTML(t *testing.T) {
	evil := `<span class="k" data-on:click="@post('/x')" style="color:red" onclick="alert(1)" id="thread">x</span>` +
		`<button type="button" class="copy" aria-label="Copy code" data-on:click="@post('/y')">Copy</button>` +
		`<input type="checkbox" checked aria-label="Done"><pre tabindex="0" role="group" aria-label="go code" class="chroma">p</pre>` +
		`<div class="code-head">h</div>`
	bad := []string{"data-", "style", "onclick", "id=", "<button", "<input", "aria-", "tabindex", "role=", "<div", "chroma"}
	for _, in := range []string{evil, "Text " + evil, "> " + evil} {
		got := Markdown(in)
		for _, b := range bad {
			if strings.Contains(got, b) {
				t.Errorf("Markdown(%q) = %q, must not contain %q", in, got, b)
			}
		}
	}
	if got := Markdown("- [x] " + evil); strings.Count(got, "<input") != 1 || strings.Count(got, "aria-") != 1 || strings.Contains(got, "<button") {
		t.Errorf("a task's HTML has elements of its own: %q", got)
	}
	got := policy.Sanitize(evil)
	if !strings.Contains(got, `<span class="k">x</span>`) {
		t.Errorf("policy.Sanitize dropped a token's class: %q", got)
	}
	for _, b := range bad {
		if strings.Contains(got, b) {
			t.Errorf("policy.Sanitize(%q) = %q, must not contain %q", evil, got, b)
		}
	}
	for _, class := range []string{"k nx", "language-go", "chroma", "code-head", "copy"} {
		if got := policy.Sanitize(`<span class="` + class + `">x</span>`); strings.Contains(got, "class") {
			t.Errorf("policy keeps span class %q: %q", class, got)
		}
	}
}

func TestMarkdown_TaskList(t *testing.T) {
	got := Markdown("- [x] Book the venue\n- [ ] Send invites\n")
	for _, w := range []string{
		`<li><input type="checkbox" checked disabled aria-label="Done"> Book the venue</li>`,
		`<li><input type="checkbox" disabled aria-label="Not done"> Send invites</li>`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("task list = %q, want it to contain %q", got, w)
		}
	}
	if strings.Count(got, "<input") != strings.Count(got, "aria-label=") {
		t.Errorf("a checkbox without a name: %q", got)
	}
}

// checkMarkdown checks that the Markdown of in holds every string of want and none of
// forbidden.
func checkMarkdown(t *testing.T, in string, want, forbidden []string) {
	t.Helper()
	got := Markdown(in)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Markdown(%q) = %q, want it to contain %q", in, got, w)
		}
	}
	for _, f := range forbidden {
		if strings.Contains(got, f) {
			t.Errorf("Markdown(%q) = %q, must not contain %q", in, got, f)
		}
	}
}
