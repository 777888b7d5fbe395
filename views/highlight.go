package views

import (
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// static/code.css, the colours of highlighted code, is generated from chroma's styles:
//go:generate go test -tags sqlite_fts5 -run TestCodeCSS . -args -update-code-css

// trustedRenderer renders the Markdown whose HTML is partly ours: code blocks, which get a
// head with a copy button and a focusable, named <pre>, and task-list checkboxes, which get a
// name. Ours is never written where goldmark writes the agent's HTML: it is recorded beside
// it (rendering.trust) and joins the HTML after the agent's is sanitized, so no agent text can
// pass for it, and the policy still strips every button, input, div and aria-* attribute an
// agent writes. The code itself, the agent's, is sanitized on its own (codeHTML).
type trustedRenderer struct{}

// RegisterFuncs registers the renderers, in place of goldmark's own for these nodes.
func (trustedRenderer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindFencedCodeBlock, renderFencedCode)
	r.Register(ast.KindCodeBlock, renderIndentedCode)
	r.Register(east.KindTaskCheckBox, renderTaskCheckBox)
}

func renderFencedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*ast.FencedCodeBlock)
		writeCodeBlock(w, source, n, n.Language(source))
	}
	return ast.WalkSkipChildren, nil
}

func renderIndentedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		writeCodeBlock(w, source, node, nil)
	}
	return ast.WalkSkipChildren, nil
}

// writeCodeBlock writes a code block: our head, then the <code> goldmark writes, highlighted
// when chroma knows the language the fence names, in our <pre>.
func writeCodeBlock(w util.BufWriter, source []byte, n ast.Node, lang []byte) {
	var code strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		code.Write(seg.Value(source))
	}
	h := codeHTML(lang, code.String())
	if r, ok := w.(*rendering); ok {
		name := ""
		if langName.Match(lang) {
			name = string(lang)
		}
		r.trust(codeBlockOpen(name) + h + "</pre>")
	} else {
		_, _ = w.WriteString("<pre>" + h + "</pre>")
	}
	_ = w.WriteByte('\n')
}

// langName is a fence's language as the page may show it; others are not shown.
var langName = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// codeBlockOpen is our HTML before a code block's <code>: a head with the language and a copy
// button (shell.js copies the text of the <pre> that follows), then the <pre>. The <pre> may
// scroll sideways, so it takes the focus (axe: scrollable-region-focusable) and has a name
// (role=group: a plain <pre> may not be named). The head and the <pre> are siblings, with no
// element around them: a streaming message's caret goes in the last <pre> of a block's HTML
// (withCaret), which must end with it.
func codeBlockOpen(lang string) string {
	label := "Code"
	var b strings.Builder
	b.WriteString(`<div class="code-head">`)
	if lang != "" {
		lang = html.EscapeString(lang)
		label = lang + " code"
		b.WriteString(`<span class="code-lang">` + lang + `</span>`)
	}
	b.WriteString(`<button type="button" class="copy" aria-label="Copy code">Copy</button></div>`)
	b.WriteString(`<pre class="chroma" tabindex="0" role="group" aria-label="` + label + `">`)
	return b.String()
}

// renderTaskCheckBox writes a task-list item's checkbox, which goldmark writes without a name
// (axe: label).
func renderTaskCheckBox(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	box := `<input type="checkbox" disabled aria-label="Not done">`
	if node.(*east.TaskCheckBox).IsChecked {
		box = `<input type="checkbox" checked disabled aria-label="Done">`
	}
	if r, ok := w.(*rendering); ok {
		r.trust(box)
	}
	_ = w.WriteByte(' ')
	return ast.WalkContinue, nil
}

// codes keeps the HTML of the code blocks lately rendered: an open block holding code is
// rendered again and again as a message streams, and a finished one again when its page is
// loaded; chroma lexes some 0.5 to 2 MB/s.
var codes = newHTMLCache(4 << 20)

// codeHTML returns the sanitized <code> element of a code block, highlighted if chroma knows
// the language the fence names, as goldmark writes it otherwise.
func codeHTML(lang []byte, code string) string {
	key := "-:" + code
	if lang != nil {
		key = strconv.Itoa(len(lang)) + ":" + string(lang) + code
	}
	if h, ok := codes.get(key); ok {
		return h
	}
	var b rendering
	b.WriteString("<code")
	name := ""
	if lang != nil {
		b.WriteString(` class="language-`)
		ghtml.DefaultWriter.Write(&b, lang)
		b.WriteByte('"')
		if langName.Match(lang) {
			name = string(lang)
		}
	}
	b.WriteByte('>')
	highlight(&b, lexerFor(name), code)
	b.WriteString("</code>")
	h := policy.Sanitize(b.String())
	codes.put(key, h)
	return h
}

// maxHighlighted is the longest code highlighted: past it, lexing would take long (and
// chroma's regular expressions may take long on odd text).
const maxHighlighted = 32 << 10

// highlight writes code, escaped, with its tokens in <span class="k">: chroma's short class
// names (as its HTML formatter writes with html.WithClasses), one class a span, line ends
// outside spans (so that a streaming caret can go before the last one). Without a lexer the
// code is written plain; so is any code the lexer would change.
func highlight(b *rendering, lexer chroma.Lexer, code string) {
	if lexer == nil || code == "" || len(code) > maxHighlighted {
		writeEscaped(b, code)
		return
	}
	tokens, err := chroma.Tokenise(lexer, nil, code)
	if err != nil || !spells(tokens, code) {
		writeEscaped(b, code)
		return
	}
	// Tokens of one class in a row share a span: a span costs 20 bytes or so, on a
	// streaming message's wire too.
	open := ""
	closeSpan := func() {
		if open != "" {
			b.WriteString("</span>")
			open = ""
		}
	}
	for _, t := range tokens {
		class := tokenClass(t.Type)
		for v := t.Value; v != ""; {
			line, rest, nl := strings.Cut(v, "\n")
			if line != "" {
				if class != open {
					closeSpan()
					if class != "" {
						b.WriteString(`<span class="` + class + `">`)
						open = class
					}
				}
				writeEscaped(b, line)
			}
			if nl {
				closeSpan()
				b.WriteByte('\n')
			}
			v = rest
		}
	}
	closeSpan()
}

// spells reports whether tokens are code, trimming the line end lexers add to code without
// one.
func spells(tokens []chroma.Token, code string) bool {
	rest := code
	for i, t := range tokens {
		if !strings.HasPrefix(rest, t.Value) {
			if i == len(tokens)-1 && t.Value == rest+"\n" {
				tokens[i].Value = rest
				return true
			}
			return false
		}
		rest = rest[len(t.Value):]
	}
	return rest == ""
}

// tokenClass is the class of a token type, as chroma's HTML formatter names it, or "" for
// text written plain: text, white space, punctuation, and chroma's meta types, errors among
// them (which lexers report in code that is fine, or not finished yet).
func tokenClass(t chroma.TokenType) string {
	for ; t > 0; t = t.Parent() {
		if class, ok := chroma.StandardTypes[t]; ok {
			if class == "w" || class == "p" {
				return "" // white space, and punctuation, which is in the text's colour
			}
			return class
		}
	}
	return ""
}

// writeEscaped writes text as appendEscaped escapes it.
func writeEscaped(w io.StringWriter, s string) {
	for {
		i := strings.IndexAny(s, `&'<>"`)
		if i < 0 {
			_, _ = w.WriteString(s)
			return
		}
		_, _ = w.WriteString(s[:i])
		_, _ = w.WriteString(escapes[s[i]])
		s = s[i+1:]
	}
}

var escapes = map[byte]string{'&': "&amp;", '\'': "&#39;", '<': "&lt;", '>': "&gt;", '"': "&#34;"}

// lexerCache holds the lexers found, coalesced (adjacent tokens of a type merged), by the
// names chroma knows them by (lowercased): the names, aliases and file extensions it has.
// A name not among them is not looked up: chroma would match it against every lexer's file
// names, which takes milliseconds.
var lexerCache = struct {
	sync.Mutex
	known map[string]bool
	m     map[string]chroma.Lexer
}{m: map[string]chroma.Lexer{}}

// lexerFor returns the lexer of the language a fence names, nil when chroma knows none: the
// language of code is never guessed from the code.
func lexerFor(name string) chroma.Lexer {
	if name == "" {
		return nil
	}
	name = strings.ToLower(name)
	c := &lexerCache
	c.Lock()
	defer c.Unlock()
	if c.known == nil {
		c.known = knownLexerNames()
	}
	if !c.known[name] {
		return nil
	}
	l, ok := c.m[name]
	if !ok {
		if l = lexers.Get(name); l != nil {
			l = chroma.Coalesce(l)
		}
		c.m[name] = l
	}
	return l
}

func knownLexerNames() map[string]bool {
	known := map[string]bool{}
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		config := l.Config()
		known[strings.ToLower(config.Name)] = true
		for _, a := range config.Aliases {
			known[strings.ToLower(a)] = true
		}
		for _, f := range config.Filenames {
			if ext, ok := strings.CutPrefix(f, "*."); ok && !strings.ContainsAny(ext, "*?[") {
				known[strings.ToLower(ext)] = true
			} else if !strings.ContainsAny(f, "*?[") {
				known[strings.ToLower(f)] = true
			}
		}
	}
	return known
}
