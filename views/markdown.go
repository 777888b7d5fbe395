package views

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var (
	md = goldmark.New(goldmark.WithExtensions(extension.GFM))
	// policy allows the Markdown vocabulary and nothing that carries behaviour: no data-*,
	// on*, style or id attributes, no script, no iframes. Links get rel=nofollow noopener.
	policy = func() *bluemonday.Policy {
		p := bluemonday.NewPolicy()
		p.AllowStandardURLs()
		p.AllowAttrs("href").OnElements("a")
		p.RequireNoFollowOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		p.AllowImages()
		p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
			"ul", "ol", "li", "strong", "em", "del", "code", "pre", "table", "thead", "tbody",
			"tr", "th", "td", "sup", "sub", "kbd")
		p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
		p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+-]+$`)).OnElements("code")
		p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
		p.AllowAttrs("type", "checked", "disabled").OnElements("input")
		return p
	}()
)

// Markdown renders untrusted agent Markdown to sanitized HTML, block by block: the blocks a
// streaming message shows one by one as they are finished (see MarkdownStream), so that a
// finished message is exactly what streamed.
func Markdown(src string) string {
	if h, ok := rendered.get(src); ok {
		return h
	}
	h := markdown(src)
	rendered.put(src, h)
	return h
}

func markdown(src string) string {
	// Each block is converted alone; their HTML is sanitized in one pass, which is the
	// same as block by block: goldmark's HTML of a block is whole (every element it opens,
	// it closes).
	var buf bytes.Buffer
	var s blockScanner
	start, pos := 0, 0
	for {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			break
		}
		end := pos + nl + 1
		for _, cut := range s.line(src[pos:end], pos) {
			convertBlock(&buf, src[start:cut])
			start = cut
		}
		pos = end
	}
	convertBlock(&buf, src[start:])
	return policy.SanitizeReader(&buf).String()
}

// renderBlock renders one block of Markdown (or any Markdown) to sanitized HTML.
func renderBlock(src string) string {
	var buf bytes.Buffer
	convertBlock(&buf, src)
	return policy.SanitizeReader(&buf).String()
}

// bufWriter lets goldmark write straight into a buffer: given a plain writer, it wraps it in
// a new 4 KB bufio.Writer for each render.
type bufWriter struct{ *bytes.Buffer }

func (bufWriter) Buffered() int { return 0 }
func (bufWriter) Flush() error  { return nil }

// convertBlock writes the HTML of one block of Markdown, unsanitized.
func convertBlock(buf *bytes.Buffer, src string) {
	if strings.TrimSpace(src) == "" {
		return
	}
	if err := md.Convert([]byte(src), bufWriter{buf}); err != nil {
		buf.WriteString("<p>" + html.EscapeString(src) + "</p>")
	}
}

// blockScanner finds where the blocks of a Markdown text end, reading it line by line, so
// that each block renders alone as it would within the whole text. It decides from the
// lines seen so far only: a block it ends stays ended whatever follows. Where it cannot be
// sure (a list, indented code, a fence) it keeps the block open: a larger block is always
// rendered right. Link reference definitions are the exception: they apply within their
// block only.
type blockScanner struct {
	lines int  // lines of the current block
	blank bool // the last line was blank
	// loose: the block may go on after a blank line (a list item, indented code).
	loose bool
	// fence is the character of the fenced code block the scanner is in, 0 outside one.
	fence       byte
	fenceLen    int
	fenceIndent int
	// fenceEnds: the fence is the block's own, and the block ends with it.
	fenceEnds bool
}

// line reads one complete line (its '\n' included) that starts at offset off, and returns
// the offsets where blocks end: before the line, after it, both, or none.
func (s *blockScanner) line(l string, off int) []int {
	end := off + len(l)
	text := strings.TrimRight(l, "\n")
	indent, rest := indentOf(text)
	if s.fence != 0 {
		if indent <= s.fenceIndent+3 && closesFence(rest, s.fence, s.fenceLen) {
			s.fence = 0
			if s.fenceEnds {
				s.reset()
				return []int{end}
			}
		}
		s.lines++
		return nil
	}
	if strings.TrimSpace(text) == "" {
		if s.lines == 0 {
			return nil // blank lines before a block are part of it, and render as nothing
		}
		s.blank = true
		if !s.loose {
			s.reset()
			return []int{end}
		}
		return nil
	}
	var cuts []int
	if s.blank && s.loose && !(indent > 0 || listItem(rest)) {
		// A blank line, then a line that cannot belong to the list or code above.
		cuts = append(cuts, off)
		s.reset()
	}
	s.blank = false
	first := s.lines == 0
	s.lines++
	if c, n := fenceOpen(rest); n > 0 {
		s.fence, s.fenceLen, s.fenceIndent = c, n, indent
		s.fenceEnds = indent <= 3 && !s.loose
		return cuts
	}
	if listItem(rest) || indent >= 4 {
		s.loose = true
	}
	if first && indent <= 3 && (atxHeading(rest) || thematicBreak(rest)) && !s.loose {
		s.reset()
		cuts = append(cuts, end)
	}
	return cuts
}

func (s *blockScanner) reset() { *s = blockScanner{} }

// indentOf returns a line's indentation in columns (tabs to the next multiple of 4) and the
// line without it.
func indentOf(line string) (int, string) {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n, line[i:]
		}
	}
	return n, ""
}

// fenceOpen reports the fence a line opens: its character and length, 0 when none.
func fenceOpen(rest string) (byte, int) {
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0
	}
	c := rest[0]
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(rest[n:], '`') >= 0) {
		return 0, 0
	}
	return c, n
}

func closesFence(rest string, c byte, n int) bool {
	k := 0
	for k < len(rest) && rest[k] == c {
		k++
	}
	return k >= n && strings.TrimSpace(rest[k:]) == ""
}

// listItem reports a line that opens a list item: -, + or * then a space, or 1-9 digits
// then . or ) and a space (or the end of the line).
func listItem(rest string) bool {
	if rest == "" {
		return false
	}
	i := 0
	switch rest[0] {
	case '-', '+', '*':
		i = 1
	default:
		for i < len(rest) && i < 9 && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(rest) || (rest[i] != '.' && rest[i] != ')') {
			return false
		}
		i++
	}
	return i == len(rest) || rest[i] == ' ' || rest[i] == '\t'
}

func atxHeading(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] == '#' {
		i++
	}
	return i >= 1 && i <= 6 && (i == len(rest) || rest[i] == ' ' || rest[i] == '\t')
}

func thematicBreak(rest string) bool {
	var c byte
	n := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ' ', '\t':
		case '-', '*', '_':
			if c != 0 && rest[i] != c {
				return false
			}
			c = rest[i]
			n++
		default:
			return false
		}
	}
	return n >= 3
}
