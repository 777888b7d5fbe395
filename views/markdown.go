package views

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

var (
	md = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(trustedRenderer{}, 100))))
	// policy allows the Markdown vocabulary and nothing that carries behaviour: no data-*,
	// on*, style or id attributes, no script, no iframes, no form controls. Links get
	// rel=nofollow noopener. Highlighted code keeps its spans' classes: one of chroma's short
	// token class names each. (The code blocks' head and the task checkboxes are ours, added
	// after sanitizing: see rendering.)
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
		p.AllowAttrs("class").Matching(spanClass).OnElements("span")
		p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
		return p
	}()
	// spanClass is a class of highlighted code's spans: one of chroma's short names of token
	// types ("k", "nx", "s2", "cpf").
	spanClass = regexp.MustCompile(`^[a-z][a-z0-9]{0,2}$`)
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
	// Each block is converted alone; their HTML is sanitized together, which is the same as
	// block by block: goldmark's HTML of a block is whole (every element it opens, it
	// closes).
	var r rendering
	var s blockScanner
	start, pos := 0, 0
	for {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			break
		}
		end := pos + nl + 1
		for _, cut := range s.line(src[pos:end], pos) {
			convertBlock(&r, src[start:cut])
			start = cut
		}
		pos = end
	}
	convertBlock(&r, src[start:])
	return r.sanitized()
}

// renderBlock renders one block of Markdown (or any Markdown) to sanitized HTML.
func renderBlock(src string) string {
	var r rendering
	convertBlock(&r, src)
	return r.sanitized()
}

// rendering holds HTML being rendered: goldmark's, made of agent text, which is sanitized,
// and ours (a code block, a checkbox: see trustedRenderer), which is not. Ours is kept beside
// the buffer, not in it, until the rest is sanitized: so no agent text can pass for it, and
// the policy need not let agents write buttons, inputs or aria-* attributes.
type rendering struct {
	bytes.Buffer
	trusted []trusted
}

// trusted is our HTML, which goes at offset at of the rendering's buffer.
type trusted struct {
	at   int
	html string
}

// Buffered and Flush make a rendering a util.BufWriter, which goldmark writes to as it is;
// given a plain writer, it wraps it in a new 4 KB bufio.Writer for each render.
func (*rendering) Buffered() int { return 0 }
func (*rendering) Flush() error  { return nil }

// trust puts our HTML at the end of what is written so far.
func (r *rendering) trust(html string) {
	r.trusted = append(r.trusted, trusted{r.Len(), html})
}

// sanitized returns the HTML: goldmark's sanitized, ours where it goes. The pieces of
// goldmark's between two of ours are sanitized alone, which is the same as in one pass:
// ours goes between whole tags.
func (r *rendering) sanitized() string {
	b := r.Bytes()
	out := bytes.NewBuffer(make([]byte, 0, len(b)+len(r.trusted)*256))
	at := 0
	for _, t := range r.trusted {
		sanitize(out, b[at:t.at])
		out.WriteString(t.html)
		at = t.at
	}
	sanitize(out, b[at:])
	return out.String()
}

func sanitize(out *bytes.Buffer, b []byte) {
	if len(b) > 0 {
		_ = policy.SanitizeReaderToWriter(bytes.NewReader(b), out)
	}
}

// convertBlock renders one block of Markdown into r, unsanitized.
func convertBlock(r *rendering, src string) {
	if strings.TrimSpace(src) == "" {
		return
	}
	n, trusted := r.Len(), len(r.trusted)
	if err := md.Convert([]byte(src), r); err != nil {
		r.Truncate(n)
		r.trusted = r.trusted[:trusted]
		r.WriteString("<p>" + html.EscapeString(src) + "</p>")
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

// MarkdownBlocks cuts Markdown into its finished blocks, each with the blank lines that
// follow it, as the page's stream cuts a reply (a terminal renders them one by one, as they
// end); when final, the rest is the last block (blank lines alone are no block). The blocks
// together are a prefix of src (all of it, when final).
func MarkdownBlocks(src string, final bool) []string {
	var blocks []string
	var sc blockScanner
	start := 0
	for off := 0; off < len(src); {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			break // the line is still being written
		}
		for _, cut := range sc.line(src[off:off+i+1], off) {
			if cut > start {
				blocks = append(blocks, src[start:cut])
				start = cut
			}
		}
		off += i + 1
	}
	if final && strings.TrimSpace(src[start:]) != "" {
		blocks = append(blocks, src[start:])
	} else if final && len(blocks) > 0 {
		blocks[len(blocks)-1] += src[start:]
	}
	return blocks
}

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
