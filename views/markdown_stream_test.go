package views

import (
	"html"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// page is a model of what app.js makes of a streaming message's patches: the finished blocks
// and the open block, as HTML (text appended at the caret escaped, as the DOM would show it).
type page struct {
	t       testing.TB
	frozen  strings.Builder
	open    string // the open block's HTML as the server sent it
	dom     string // the open block as shown
	hasOpen bool
	ended   bool
	wire    int
}

func (pg *page) apply(p MarkdownPatch) {
	pg.t.Helper()
	if pg.ended {
		pg.t.Fatal("a patch after the end")
	}
	if p.Splice {
		if !pg.hasOpen {
			pg.t.Fatalf("splice without an open block: %+v", p)
		}
		u := utf16.Encode([]rune(pg.open))
		if p.SpliceAt+p.SpliceKeep > len(u) {
			pg.t.Fatalf("splice keeps %d and %d of %d units", p.SpliceAt, p.SpliceKeep, len(u))
		}
		pg.open = string(utf16.Decode(u[:p.SpliceAt])) + p.SpliceHTML + string(utf16.Decode(u[len(u)-p.SpliceKeep:]))
		pg.dom = pg.open
		pg.wire += len(p.SpliceHTML) + 12
	}
	if p.Append != "" {
		if !pg.hasOpen || !strings.Contains(pg.dom, Caret) {
			pg.t.Fatalf("append %q without a caret", p.Append)
		}
		// app.js keeps the HTML it was sent with the text it appended, as the server does.
		pg.open = strings.Replace(pg.open, Caret, html.EscapeString(p.Append)+Caret, 1)
		pg.dom = strings.Replace(pg.dom, Caret, html.EscapeString(p.Append)+Caret, 1)
		pg.wire += len(p.Append)
	}
	if p.Freeze {
		if !pg.hasOpen {
			pg.t.Fatal("freeze without an open block")
		}
		pg.frozen.WriteString(strings.Replace(pg.dom, Caret, "", 1))
		pg.hasOpen, pg.open, pg.dom = false, "", ""
	}
	pg.frozen.WriteString(p.Blocks)
	pg.wire += len(p.Blocks)
	if p.Open {
		if pg.hasOpen {
			pg.t.Fatal("a second open block")
		}
		if !strings.Contains(p.OpenHTML, Caret) {
			pg.t.Fatalf("open block without a caret: %q", p.OpenHTML)
		}
		pg.open, pg.dom, pg.hasOpen = p.OpenHTML, p.OpenHTML, true
		pg.wire += len(p.OpenHTML)
	}
	if p.End {
		if pg.hasOpen {
			pg.t.Fatal("ended with an open block")
		}
		pg.ended = true
	}
}

func (pg *page) html() string { return pg.frozen.String() + strings.Replace(pg.dom, Caret, "", 1) }

// stream feeds text in the given pieces and returns the page it makes.
func stream(t testing.TB, pieces []string) *page {
	t.Helper()
	pg := &page{t: t}
	var m MarkdownStream
	var sofar string
	for _, piece := range pieces {
		before := pg.frozen.String()
		pg.apply(m.Write(piece))
		sofar += piece
		if !strings.HasPrefix(pg.frozen.String(), before) {
			t.Fatalf("a finished block changed after %q", sofar)
		}
		if m.Len() != len(sofar) {
			t.Fatalf("Len = %d, want %d", m.Len(), len(sofar))
		}
	}
	pg.apply(m.End())
	return pg
}

// replies are the kinds of Markdown models write.
var replies = []string{
	"Sure! Here is **the plan**:\n\n1. Book the venue.\n2. Order *catering* for 30.\n3. Send invites.\n\nAnything else?",
	"Use `go test -race`:\n\n```go\nfunc TestX(t *testing.T) {\n\tif got := f(); got != 1 {\n\t\tt.Fatal(got)\n\t}\n}\n```\n\nThen run it again.\n",
	"| Venue | Seats | Price |\n|---|---:|---|\n| Loft | 40 | $900 |\n| Barn | 120 | $2,000 |\n\nThe *Loft* fits best.",
	"# Summary\n\nThe build failed at step 3.\n\n## Why\n\n> error: missing module\n> see go.mod\n\n- Check `go.sum`\n- Run `go mod tidy`\n\n  Then commit.\n\n---\n\nDone.",
	"A list with a gap:\n\n- one\n\n- two\n    indented more\n\n      code in a list\n\nAfter the list, a [link](https://example.com) and www.example.com.",
	"Nested fence in a list:\n\n1. Step\n   ```sh\n   make\n\n   make install\n   ```\n2. Next\n\nEnd with no newline",
	"Unclosed ``` at the end\n```python\nprint('hi')\n\nmore code",
	"Setext\n======\n\nText with a hard  \nbreak, ~~strike~~ and emoji 😀 and ünïcödé.\n\n* * *\n\n<b>raw html</b> <script>alert(1)</script>",
	"    indented code\n\n    more indented\n\nplain",
	"",
	"\n\n\nleading blank lines",
	"Tabs\tand\ttabs\n\t- list after tab\n",
	"Tasks:\n\n- [x] Book the venue\n- [ ] Send `invites`\n\n> ```json\n> {\"seats\": 40, \"ok\": true}\n> ```\n\n```klingon\nqapla'\n```\n~~~sh\nmake && ./run --flag\n~~~",
}

func TestMarkdownStream_FinishedMessageIsWhatStreamed(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, text := range replies {
		for name, pieces := range map[string][]string{
			"whole":  {text},
			"bytes":  splitEvery(text, 1),
			"tokens": tokens(text),
			"random": randomPieces(rng, text),
		} {
			pg := stream(t, pieces)
			if got, want := pg.html(), markdown(text); got != want {
				t.Errorf("%s pieces of %q:\n got %q\nwant %q", name, text, got, want)
			}
		}
	}
}

func TestMarkdownStream_KeepsWhatItRendered(t *testing.T) {
	text := "A reply that streamed, **whole**:\n\n- one\n- two\n"
	pg := stream(t, tokens(text))
	if h, ok := rendered.get(text); !ok || h != pg.html() || h != markdown(text) {
		t.Fatalf("the cache holds %q (%v), want what streamed: %q", h, ok, pg.html())
	}
}

func TestMarkdownStream_RendersAsItGrows(t *testing.T) {
	var m MarkdownStream
	pg := &page{t: t}
	for _, piece := range []string{"Some ", "**bold", "**", " text", "\n\n", "- a", "\n- b"} {
		pg.apply(m.Write(piece))
	}
	got := pg.html()
	for _, want := range []string{"<p>Some <strong>bold</strong> text</p>", "<li>a</li>", "<li>b"} {
		if !strings.Contains(got, want) {
			t.Errorf("while streaming the page shows %q, without %q", got, want)
		}
	}
	if strings.Contains(got, "**") {
		t.Errorf("closed bold still shows its asterisks: %q", got)
	}
	// Code inside a fence is appended as it comes, and shows as code at once.
	m, pg = MarkdownStream{}, &page{t: t}
	pg.apply(m.Write("```go\n"))
	p := m.Write("x := 1 < 2")
	if p.Append != "x := 1 < 2" || p.Splice {
		t.Errorf("code in a fence: %+v, want it appended", p)
	}
	pg.apply(p)
	if got := pg.html(); !strings.Contains(got, `<code class="language-go">x := 1 &lt; 2`) {
		t.Errorf("code shows as %q", got)
	}
}

func TestMarkdownStream_HighlightsCode(t *testing.T) {
	var m MarkdownStream
	pg := &page{t: t}
	pg.apply(m.Write("Run:\n\n```go\nfunc main() {\n"))
	if got := pg.html(); !strings.Contains(got, `<code class="language-go"><span class="kd">func</span> <span class="nf">main</span>`) {
		t.Errorf("an open fence shows as %q, want it highlighted", got)
	}
	// Code written into the fence shows at once, as text, and highlighted when its line
	// ends (the block still open).
	text := "Run:\n\n```go\nfunc main() {\n"
	for _, piece := range []string{"\tfmt", ".Println", "(1)\n", "}\n", "```", "\n", "Done."} {
		pg.apply(m.Write(piece))
		text += piece
		if piece == "(1)\n" && !strings.Contains(pg.html(), `<span class="nx">fmt</span>`) {
			t.Errorf("a finished line of an open fence shows as %q, want it highlighted", pg.html())
		}
	}
	pg.apply(m.End())
	got := pg.html()
	if got != markdown(text) {
		t.Fatalf("got %q\nwant %q", got, markdown(text))
	}
	if !strings.Contains(got, `<span class="nx">fmt</span>`) || strings.Count(got, `class="copy"`) != 1 {
		t.Errorf("the finished block shows as %q, want it highlighted, with one copy button", got)
	}
}

func TestMarkdownStream_Sanitized(t *testing.T) {
	evil := `**hi** <img src=x onerror="alert(1)"> <div data-on:click="@post('/x')">x</div> [a](javascript:alert(1))`
	for _, pieces := range [][]string{{evil}, splitEvery(evil, 1), tokens(evil)} {
		var m MarkdownStream
		var wire strings.Builder
		for _, piece := range pieces {
			p := m.Write(piece)
			wire.WriteString(p.SpliceHTML + p.Blocks + p.OpenHTML)
		}
		p := m.End()
		wire.WriteString(p.SpliceHTML + p.Blocks + p.OpenHTML)
		for _, bad := range []string{`onerror="`, `data-on:click="`, `href="javascript`, "<div", "<script"} {
			if strings.Contains(wire.String(), bad) {
				t.Errorf("rendered HTML carries %q: %s", bad, wire.String())
			}
		}
	}
}

// FuzzMarkdownStream holds every text to the promise: streamed in any pieces, the finished
// message is what Markdown renders, and finished blocks never change.
func FuzzMarkdownStream(f *testing.F) {
	for _, r := range replies {
		f.Add(r, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint8) {
		if !utf8.ValidString(text) {
			t.Skip("agents write text")
		}
		rng := rand.New(rand.NewSource(int64(seed)))
		pg := stream(t, randomPieces(rng, text))
		if got, want := pg.html(), markdown(text); got != want {
			t.Fatalf("got %q\nwant %q", got, want)
		}
	})
}

// splitEvery cuts s every n bytes, or at the next character: text comes in whole characters.
func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		k := n
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out, s = append(out, s[:k]), s[k:]
	}
	return append(out, s)
}

// tokens cuts text the way model tokenizers roughly do: words with their leading space,
// punctuation and newlines on their own.
func tokens(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		c := string(r)
		switch {
		case r == ' ' || r == '\n' || strings.ContainsRune("*_`#|-[]()!.,:", r):
			if cur != "" {
				out = append(out, cur)
			}
			cur = c
			if r != ' ' {
				out, cur = append(out, cur), ""
			}
		default:
			cur += c
			if len(cur) >= 4 {
				out, cur = append(out, cur), ""
			}
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

func randomPieces(rng *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + rng.Intn(12)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		if n > len(s) {
			n = len(s)
		}
		out, s = append(out, s[:n]), s[n:]
	}
	return out
}

// A paragraph of plain words is rendered without the renderer only when the renderer would
// render it just so.
func TestPlainParagraph(t *testing.T) {
	for _, src := range []string{
		"Hello world", "Hello world\n", "Hello world\n\n", "Hello  world", "Hello \nworld", "Hello\nworld",
		"Hello\n world", "Note: see www.example.com", "Mail me at ann@example.com", "Visit http://x.example",
		"Visit ftp.example.com today", "Price is $5, or 50% off; ok? {yes}", `He said "hi" and 'bye'`, "ÉLAN vital, naïve café",
		"1. not plain", "Over\n2) a list", "Tabs\there", "Trailing ", "x^2 and a/b", "WWW.EXAMPLE.COM", "\n\nleading",
		"Setext\n===", "Line one\nLine two\nLine three", "A 'quoted' word: done.", "Ends with a colon:",
	} {
		for _, caret := range []bool{false, true} {
			h, ok := plainParagraph(src, caret)
			if !ok {
				continue
			}
			want := renderBlock(src)
			if caret {
				want, _ = withCaret(want, src)
			}
			if h != want {
				t.Errorf("plainParagraph(%q, %v) = %q, the renderer gives %q", src, caret, h, want)
			}
		}
	}
}
