package views

import (
	"bytes"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parley-chat/parley/internal/mdblock"
)

// MarkdownStream renders a message as it is written, for a page that shows it growing. The
// text is cut into the blocks Markdown renders (see mdblock.Scanner): a finished block is
// rendered once, exactly as the finished message shows it, and never changes on the page
// again; only the last, open block changes. Text that cannot change how the open block
// renders (plain words in a paragraph, code inside a fence) is appended at its end as it
// comes; anything else re-renders the open block, and the page is sent only what changed at
// its end. Every render is sanitized like Markdown's.
type MarkdownStream struct {
	src     []byte
	scan    mdblock.Scanner
	scanned int // where the first line the scanner has not read starts
	start   int // where the open block starts

	// The open block's HTML as the page has it, text appended at the caret included: head
	// is what comes before the caret, tail the caret and what follows it.
	hasOpen    bool
	head, tail []byte
	fast       bool // appending at the caret shows what rendering would
	heading    bool // the caret is in a heading
	rendered   int  // the length of src when the open block was last rendered

	final []byte // the finished blocks' HTML: Markdown of the text, once it ends
}

// MarkdownPatch is how the page's copy of a streaming message changes, applied in the order
// of its fields (app.js does it).
type MarkdownPatch struct {
	// Splice replaces the open block's HTML but its first SpliceAt and last SpliceKeep UTF-16
	// units with SpliceHTML: a render sends only what changed.
	Splice     bool
	SpliceAt   int
	SpliceKeep int
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
	// At, on the end, is when the message was finished (as the page drawn again shows it):
	// the streamed message gets that time, not the browser's.
	At time.Time
	// Len is the length of the text so far, in bytes.
	Len int
}

// Caret marks where text is appended in the open block. Sanitized Markdown has no <i>.
const Caret = "<i></i>"

// Source is the text written so far.
func (m *MarkdownStream) Source() string { return string(m.src) }

// Len is the length of the text written so far.
func (m *MarkdownStream) Len() int { return len(m.src) }

// Write adds text, in whole characters, and says how the page changes.
func (m *MarkdownStream) Write(delta string) MarkdownPatch {
	p := MarkdownPatch{}
	m.src = append(m.src, delta...)
	switch cuts := m.readLines(); {
	case len(cuts) > 0:
		m.finish(&p, cuts)
		m.renderOpen(&p)
	case m.tableRow():
		// A row shows once written whole: cell by cell it would redraw the table each time.
	case m.hasOpen && m.fast && m.appendable(delta):
		m.head = appendEscaped(m.head, delta)
		p.Append = delta
	default:
		m.renderOpen(&p)
	}
	p.Len = len(m.src)
	return p
}

// tableRow reports an open block whose last line, not finished yet, is a table row.
func (m *MarkdownStream) tableRow() bool {
	line := bytes.TrimLeft(m.src[m.scanned:], " \t")
	return !m.scan.InFence() && len(line) > 0 && line[0] == '|'
}

// End finishes the message: the open block is rendered as the finished message shows it.
// The message's HTML is then what Markdown renders of its text: that is kept for it.
func (m *MarkdownStream) End() MarkdownPatch {
	p := MarkdownPatch{End: true, Len: len(m.src)}
	m.finish(&p, []int{len(m.src)})
	rendered.put(string(m.src), string(m.final))
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
		cuts = append(cuts, m.scan.Line(string(m.src[m.scanned:end]), m.scanned)...)
		m.scanned = end
	}
}

// finish ends the blocks up to each cut: the open block freezes (corrected first if the page
// shows it otherwise than its final render), the others follow whole.
func (m *MarkdownStream) finish(p *MarkdownPatch, cuts []int) {
	for _, cut := range cuts {
		src := string(m.src[m.start:cut])
		h, plain := plainParagraph(src, false)
		if !plain {
			h = renderBlock(src)
		}
		m.final = append(m.final, h...)
		if m.hasOpen {
			if !m.shows(h) {
				m.splice(p, h)
			}
			p.Freeze = true
			m.hasOpen = false
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
	h, plain := plainParagraph(src, true)
	container := "p"
	if !plain {
		h, container = withCaret(renderBlock(src), src)
	}
	fast := container == "code" && m.scan.InFence() ||
		!m.scan.InFence() && (container == "p" || container == "li" || heading(container)) && !risky(src)
	m.heading = heading(container)
	m.rendered = len(m.src)
	if m.hasOpen {
		m.splice(p, h)
	} else {
		p.Open, p.OpenHTML = true, h
		m.setOpen(h)
	}
	m.hasOpen, m.fast = true, fast
}

// plainParagraph renders, without the renderer, a block that can only be a paragraph of plain
// words: lines that start with a letter and hold nothing Markdown reads (no markup, no
// entity, no HTML, nothing a link is made of), and end without spaces. Most of what models
// write is that, and it renders as the renderer would: the words, escaped, in a <p>. With
// caret, the caret follows them, as withCaret puts it.
func plainParagraph(src string, caret bool) (string, bool) {
	text := strings.TrimLeft(strings.TrimRight(src, " \n"), "\n")
	if text == "" || strings.Contains(text, "://") || strings.Contains(strings.ToLower(text), "www.") {
		return "", false
	}
	start := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			if text[i-1] == ' ' {
				return "", false
			}
			start = true
			continue
		case start:
			r, _ := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) {
				return "", false
			}
		case c >= utf8.RuneSelf:
		case !inertByte[c] || c == '@':
			return "", false
		}
		start = false
	}
	b := make([]byte, 0, len(text)+32)
	b = append(b, "<p>"...)
	b = appendEscaped(b, text)
	if caret {
		if strings.IndexByte(" \n", src[len(src)-1]) >= 0 {
			b = append(b, ' ')
		}
		b = append(b, Caret...)
	}
	b = append(b, "</p>\n"...)
	return string(b), true
}

// setOpen makes h the open block's HTML.
func (m *MarkdownStream) setOpen(h string) {
	i := strings.Index(h, Caret)
	if i < 0 {
		i = len(h)
	}
	m.head, m.tail = append(m.head[:0], h[:i]...), append(m.tail[:0], h[i:]...)
}

// shows reports whether the open block shows h, its caret aside.
func (m *MarkdownStream) shows(h string) bool {
	rest := m.tail
	if bytes.HasPrefix(rest, []byte(Caret)) {
		rest = rest[len(Caret):]
	}
	return len(m.head)+len(rest) == len(h) && string(m.head) == h[:len(m.head)] && string(rest) == h[len(m.head):]
}

// splice sends what differs between the open block's HTML and h: the middle, between their
// common beginning and end. The page then has h.
func (m *MarkdownStream) splice(p *MarkdownPatch, h string) {
	old := string(m.head) + string(m.tail)
	m.setOpen(h)
	if h == old {
		return
	}
	k := 0
	for k < len(h) && k < len(old) && h[k] == old[k] {
		k++
	}
	for k > 0 && (k < len(h) && !utf8.RuneStart(h[k]) || k < len(old) && !utf8.RuneStart(old[k])) {
		k--
	}
	l := 0
	for l < len(h)-k && l < len(old)-k && h[len(h)-1-l] == old[len(old)-1-l] {
		l++
	}
	for l > 0 && (!utf8.RuneStart(h[len(h)-l]) || !utf8.RuneStart(old[len(old)-l])) {
		l--
	}
	p.Splice, p.SpliceAt, p.SpliceKeep, p.SpliceHTML = true, utf16Len(old[:k]), utf16Len(old[len(old)-l:]), h[k:len(h)-l]
}

// appendable reports whether delta, just written, shows at the caret as a render would show
// it: code in a fence but a fence's own characters, or plain words in a paragraph, a heading
// or a list item. Characters that mean something only at the start of a line count as plain
// elsewhere.
func (m *MarkdownStream) appendable(delta string) bool {
	at := len(m.src) - len(delta)
	if m.scan.InFence() {
		// Code but a fence's own characters opening a line, which may close the fence.
		for i := 0; i < len(delta); i++ {
			if (delta[i] == '`' || delta[i] == '~') && lineStart(m.src, at+i) {
				return false
			}
		}
		// A finished line of code is shown highlighted: the block is rendered again at a
		// line end while it is small, and once it has grown by an eighth when it is not, so
		// that lexing a long block again and again stays a fraction of lexing it once.
		if strings.IndexByte(delta, '\n') >= 0 {
			if n := len(m.src) - m.start; n < 2048 || len(m.src)-m.rendered > n/8 {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(delta); i++ {
		c := delta[i]
		if c >= utf8.RuneSelf || inertByte[c] {
			continue
		}
		// A line end in a paragraph is a soft break, rendered as a line end; one that ends
		// an empty line may end the block, and one in a heading does.
		if c == '\n' && !lineStart(m.src, at+i) && !m.heading {
			continue
		}
		if opener(m.src, at+i) {
			continue
		}
		if !midLineByte[c] || lineStart(m.src, at+i) {
			return false
		}
	}
	return true
}

// opener reports an emphasis, code or link delimiter after a space (or a line's start)
// that opens, if anything: until its closer comes, a render shows it as it is written.
// The closer, after a word, is rendered.
func opener(src []byte, i int) bool {
	c := src[i]
	if c != '*' && c != '_' && c != '`' && c != '[' {
		return false
	}
	j := i
	for j > 0 && src[j-1] == c {
		j--
	}
	return j > 0 && (src[j-1] == ' ' || src[j-1] == '\n') && !lineStart(src, j)
}

// appendEscaped appends text to b as HTML would show it, escaped as the renderer escapes.
func appendEscaped(b []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '\'':
			b = append(b, "&#39;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&#34;"...)
		default:
			b = append(b, c)
		}
	}
	return b
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
		if _, rest := mdblock.IndentOf(line); strings.HasPrefix(rest, "<") || strings.HasPrefix(rest, "[") {
			return true
		}
	}
	return false
}

// withCaret puts the caret at the end of the last text of a rendered block: inside its last
// paragraph, list item, heading, cell or code, which it returns.
func withCaret(h, src string) (string, string) {
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
	if container == "code" && !strings.HasSuffix(src, "\n") && strings.HasSuffix(h[:pos], "\n") {
		pos-- // the render ends the last line of code; the text does not yet
	}
	caret := Caret
	if container != "code" && src != "" && strings.IndexByte(" \t\n", src[len(src)-1]) >= 0 {
		caret = " " + Caret // the render drops the space the next words follow
	}
	return h[:pos] + caret + h[pos:], container
}

func heading(name string) bool {
	return len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6'
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
