package views

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/parley-chat/parley/internal/mdblock"
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
	var s mdblock.Scanner
	start, pos := 0, 0
	for {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			break
		}
		end := pos + nl + 1
		for _, cut := range s.Line(src[pos:end], pos) {
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
