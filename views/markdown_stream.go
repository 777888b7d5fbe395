package views

import (
	"bytes"
	"html"
	"strings"
	"unicode/utf8"
)

// MarkdownStream renders a message as it is written, for a page that shows it growing. The
// text is cut into the blocks Markdown renders (see blockScanner): a finished block is
// rendered once, exactly as the finished message shows it, and never changes on the page
// again; only the last, open block changes. Text that cannot change how the open block
// renders (plain words in a paragraph, code inside a fence) is appended at its end as it
// comes; anything else re-renders the open block, and the page is sent only what changed at
// its end. Every render is sanitized like Markdown's.
type MarkdownStream struct {
	src     []byte
	scan    blockScanner
	scanned int // where the first line the scanner has not read starts
	start   int // where the open block starts

	hasOpen  bool
	open     string // the open block's HTML as the page has it, caret included
	appended []byte // text the page appended at the caret since
	fast     bool   // appending at the caret shows what rendering would
}

// MarkdownPatch is how the page's copy of a streaming message changes, applied in the order
// of its fields (app.js does it).
type MarkdownPatch struct {
	// Splice keeps the open block's first SpliceAt UTF-16 units of HTML and adds SpliceHTML.
	Splice     bool
	SpliceAt   int
	SpliceHTML string
	// Append is text to add at the caret, as text.
	Append string
	// Freeze: the open block is finished as it stands.
	Freeze bool
	// Blocks is the HTML of finished blocks that follow.
	Blocks string
	// Open starts a new open block with OpenHTML, which holds the caret.
	Open     bool
	OpenHTML string
	// End: the message is finished.
	End bool
	// Len is the length of the text so far, in bytes.
	Len int
}

// Caret marks where text is appended in the open block. Sanitized Markdown has no <i>.
const Caret = "<i></i>"

// Source is the text written so far.
func (m *MarkdownStream) Source() string { return string(m.src) }

// Len is the length of the text written so far.
func (m *MarkdownStream) Len() int { return len(m.src) }

// Write adds text and says how the page changes.
func (m *MarkdownStream) Write(delta string) MarkdownPatch {
	p := MarkdownPatch{}
	m.src = append(m.src, delta...)
	if cuts := m.readLines(); len(cuts) > 0 {
		m.finish(&p, cuts)
		m.renderOpen(&p)
	} else if m.hasOpen && m.fast && m.appendable(delta) {
		m.appended = append(m.appended, delta...)
		p.Append = delta
	} else {
		m.renderOpen(&p)
	}
	p.Len = len(m.src)
	return p
}

// End finishes the message: the open block is rendered as the finished message shows it.
func (m *MarkdownStream) End() MarkdownPatch {
	p := MarkdownPatch{End: true, Len: len(m.src)}
	m.finish(&p, []int{len(m.src)})
	return p
}

// readLines feeds the lines completed since the last call to the scanner and returns the
// offsets where blocks ended.
func (m *MarkdownStream) readLines() []int {
	var cuts []int
	for {
		nl := bytes.IndexByte(m.src[m.scanned:], '\n')
		if nl < 0 {
			return cuts
		}
		end := m.scanned + nl + 1
		cuts = append(cuts, m.scan.line(string(m.src[m.scanned:end]), m.scanned)...)
		m.scanned = end
	}
}

// finish ends the blocks up to each cut: the open block freezes (corrected first if the page
// shows it otherwise than its final render), the others follow whole.
func (m *MarkdownStream) finish(p *MarkdownPatch, cuts []int) {
	for _, cut := range cuts {
		h := renderBlock(string(m.src[m.start:cut]))
		if m.hasOpen {
			if m.shown() != h {
				m.splice(p, h)
			}
			p.Freeze = true
			m.hasOpen, m.open, m.appended = false, "", m.appended[:0]
		} else {
			p.Blocks += h
		}
		m.start = cut
	}
}

// renderOpen renders the open block with its caret and sends what changed.
func (m *MarkdownStream) renderOpen(p *MarkdownPatch) {
	src := string(m.src[m.start:])
	if !m.hasOpen && strings.TrimSpace(src) == "" {
		return
	}
	h, fast := withCaret(renderBlock(src), src, m.scan.fence != 0)
	fast = fast && (m.scan.fence != 0 || !risky(src))
	if m.hasOpen {
		m.splice(p, h)
	} else {
		p.Open, p.OpenHTML = true, h
	}
	m.hasOpen, m.open, m.fast, m.appended = true, h, fast, m.appended[:0]
}

// splice sends the part of h that differs from the open block's HTML at the end.
func (m *MarkdownStream) splice(p *MarkdownPatch, h string) {
	if h == m.open && len(m.appended) == 0 {
		return // the page shows h already
	}
	k := 0
	for k < len(h) && k < len(m.open) && h[k] == m.open[k] {
		k++
	}
	for k > 0 && k < len(h) && !utf8.RuneStart(h[k]) {
		k--
	}
	p.Splice, p.SpliceAt, p.SpliceHTML = true, utf16Len(h[:k]), h[k:]
}

// shown is the open block as the page shows it, without the caret.
func (m *MarkdownStream) shown() string {
	return strings.Replace(m.open, Caret, html.EscapeString(string(m.appended)), 1)
}

// appendable reports whether delta, just written, shows at the caret as a render would show
// it: code in a fence but a fence's own characters, or plain words in a paragraph, a heading
// or a list item. Characters that mean something only at the start of a line count as plain
// elsewhere.
func (m *MarkdownStream) appendable(delta string) bool {
	if m.scan.fence != 0 {
		return strings.IndexAny(delta, "`~") < 0
	}
	at := len(m.src) - len(delta)
	for i := 0; i < len(delta); i++ {
		c := delta[i]
		if c >= utf8.RuneSelf || inertByte[c] {
			continue
		}
		if !midLineByte[c] || lineStart(m.src, at+i) {
			return false
		}
	}
	return true
}

// lineStart reports whether only spaces precede position i on its line.
func lineStart(src []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch src[i] {
		case '\n':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

// inertByte marks the ASCII characters that mean nothing to Markdown within a line;
// midLineByte those that mean something only at the start of one.
var inertByte, midLineByte = func() (t, mid [utf8.RuneSelf]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "0123456789 .,;:?'\"/%$@^{}" {
		t[c] = true
	}
	for _, c := range "-+=#|" {
		mid[c] = true
	}
	return t, mid
}()

// risky reports an open block whose end a render may not show where the caret goes: raw
// HTML, a link reference definition, an entity being written.
func risky(src string) bool {
	last := src[strings.LastIndexByte(src, '\n')+1:]
	if strings.ContainsAny(last, "<&") {
		return true
	}
	for _, line := range strings.Split(src, "\n") {
		if _, rest := indentOf(line); strings.HasPrefix(rest, "<") || strings.HasPrefix(rest, "[") {
			return true
		}
	}
	return false
}

// withCaret puts the caret at the end of the last text of a rendered block: inside its last
// paragraph, list item, heading, cell or code. fast reports whether appending plain text
// there shows what a render would.
func withCaret(h, src string, fenced bool) (string, bool) {
	pos, container := len(h), ""
	for {
		t := strings.TrimRight(h[:pos], " \n")
		k := strings.LastIndex(t, "</")
		if k < 0 || !strings.HasSuffix(t, ">") {
			break
		}
		name := t[k+2 : len(t)-1]
		if !blockElement(name) || (name == "code" && container != "pre") {
			break
		}
		pos, container = k, name
	}
	var fast bool
	switch container {
	case "code":
		fast = fenced
		if !strings.HasSuffix(src, "\n") && strings.HasSuffix(h[:pos], "\n") {
			pos-- // the render ends the last line of code; the text does not yet
		}
	case "p", "li", "h1", "h2", "h3", "h4", "h5", "h6":
		fast = true
	}
	caret := Caret
	if container != "code" && src != "" && strings.IndexByte(" \t\n", src[len(src)-1]) >= 0 {
		caret = " " + Caret // the render drops the space the next words follow
	}
	return h[:pos] + caret + h[pos:], fast
}

func blockElement(name string) bool {
	switch name {
	case "p", "li", "ul", "ol", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code",
		"table", "thead", "tbody", "tr", "td", "th":
		return true
	}
	return false
}

// utf16Len is the length of s in UTF-16 units, as the page's JavaScript counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
