package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines is how long the README may grow: it is an index, not the manual.
const readmeMaxLines = 320

// TestLinks checks README.md and every Markdown page under docs/: a relative link must lead
// to a file or directory that exists, a #fragment must name a heading of the page it points
// into, every page must be reachable from README.md through links, and README.md must stay
// within readmeMaxLines. Links to other sites (http, https, mailto) are not followed, and
// nothing inside a fenced code block or a code span is a link.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	names := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]*page{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = parsePage(string(b))
	}

	if n := pages["README.md"].lines; n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the text into a page under docs/ and link it", n, readmeMaxLines)
	}

	// anchors reads the headings of a Markdown file that is not one of the pages (say, a
	// README of a package), once.
	anchors := func(name string) (map[string]bool, error) {
		if p, ok := pages[name]; ok {
			return p.anchors, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		p := parsePage(string(b))
		pages[name] = p
		return p.anchors, nil
	}

	linked := map[string][]string{} // the pages each page links to
	for _, name := range names {
		for _, l := range pages[name].links {
			target, problem := checkLink(root, name, l.target, anchors)
			if problem != "" {
				t.Errorf("%s:%d: link %q: %s", name, l.line, l.target, problem)
			}
			if target != "" && target != name {
				linked[name] = append(linked[name], target)
			}
		}
	}

	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		for _, to := range linked[from] {
			if !reached[to] {
				reached[to] = true
				queue = append(queue, to)
			}
		}
	}
	for _, name := range names {
		if !reached[name] {
			t.Errorf("%s: no chain of links leads to it from README.md: link it from the index (docs/README.md) or a page", name)
		}
	}
}

// checkLink checks one link of the page named from (a path from the repository's root) and
// returns what it says is wrong, if anything, and the Markdown file it leads to, if it leads
// to one.
func checkLink(root, from, raw string, anchors func(name string) (map[string]bool, error)) (target, problem string) {
	if external(raw) {
		return "", ""
	}
	ref, frag, _ := strings.Cut(raw, "#")
	if i := strings.IndexByte(ref, '?'); i >= 0 {
		ref = ref[:i]
	}
	ref, err := url.PathUnescape(ref)
	if err != nil {
		return "", "cannot read its path: " + err.Error()
	}
	frag, err = url.PathUnescape(frag)
	if err != nil {
		return "", "cannot read its fragment: " + err.Error()
	}
	target = from
	if ref != "" {
		if strings.HasPrefix(ref, "/") {
			return "", "a path from the site's root: make it relative to the page"
		}
		target = path.Clean(path.Join(path.Dir(from), ref))
		if target == ".." || strings.HasPrefix(target, "../") {
			return "", "leads out of the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", "no such file: " + target
			}
			return "", err.Error()
		}
	}
	if !strings.HasSuffix(target, ".md") {
		return "", "" // a fragment of another kind of file (a line of code, say) is not checked
	}
	if frag != "" {
		a, err := anchors(target)
		if err != nil {
			return target, err.Error()
		}
		if !a[frag] {
			return target, fmt.Sprintf("no heading of %s has the anchor #%s", target, frag)
		}
	}
	return target, ""
}

// external reports whether a link leads to another site, whose pages are not checked.
func external(link string) bool {
	l := strings.ToLower(link)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:") ||
		strings.HasPrefix(l, "//")
}

// page is what the test reads of a Markdown file.
type page struct {
	lines   int
	links   []link
	anchors map[string]bool
}

// link is one link of a page, with the line it is on.
type link struct {
	line   int
	target string
}

// parsePage reads a Markdown file's links and the anchors of its headings (ATX headings:
// "# Title"), leaving out what is inside fenced code blocks. Links are read a block of lines
// at a time, since a link's text may be wrapped over lines.
func parsePage(text string) *page {
	p := &page{anchors: map[string]bool{}}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	p.lines = len(lines)
	var fence string // the fence that opened the block we are in, or ""
	slugs := slugger{}
	var block []string // the lines of the paragraph (or list, or table) being read
	first := 0         // the line number of its first line
	flush := func() {
		for _, f := range blockLinks(strings.Join(block, "\n")) {
			p.links = append(p.links, link{line: first + f.line, target: f.target})
		}
		block = block[:0]
	}
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			rest := strings.TrimRight(trimmed, " ")
			if strings.HasPrefix(rest, fence) && strings.Trim(rest, fence[:1]) == "" && len(line)-len(trimmed) < 4 {
				fence = ""
			}
			continue
		}
		if f := fenceOpens(line); f != "" {
			flush()
			fence = f
			continue
		}
		if h, ok := heading(line); ok {
			flush()
			p.anchors[slugs.next(h)] = true
			first, block = i+1, append(block, line)
			flush()
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(block) == 0 {
			first = i + 1
		}
		block = append(block, line)
	}
	flush()
	return p
}

// fenceOpens returns the fence (``` or ~~~, three or more) a line opens a code block with,
// or "".
func fenceOpens(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) >= 4 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !strings.Contains(trimmed[n:], "`")) {
			return trimmed[:n]
		}
	}
	return ""
}

// heading returns the text of an ATX heading ("## Title ##"), as GitHub renders it for its
// anchor: code spans as their text, links as their text.
func heading(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) >= 4 {
		return "", false
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(trimmed) && trimmed[n] != ' ' && trimmed[n] != '\t' {
		return "", false
	}
	text := strings.TrimSpace(trimmed[n:])
	// A closing sequence of #s, after a space, is not part of the heading.
	if end := strings.TrimRight(text, "#"); end != text && (end == "" || strings.HasSuffix(end, " ")) {
		text = strings.TrimSpace(end)
	}
	text = strings.ReplaceAll(text, "`", "")
	var b strings.Builder
	for {
		open := strings.Index(text, "](")
		start := strings.LastIndex(text[:max(open, 0)], "[")
		if open < 0 || start < 0 {
			break
		}
		end := strings.IndexByte(text[open:], ')')
		if end < 0 {
			break
		}
		b.WriteString(strings.TrimSuffix(text[:start], "!"))
		b.WriteString(text[start+1 : open])
		text = text[open+end+1:]
	}
	b.WriteString(text)
	return b.String(), true
}

// found is a link's destination, and the line of its block it ends on (0 the first).
type found struct {
	line   int
	target string
}

// blockLinks returns the destinations of the links and images of a block of lines: inline
// ones, [text](target), and reference definitions, [label]: target. Code spans are left
// out.
func blockLinks(block string) []found {
	block = stripCode(block)
	var out []found
	for i, line := range strings.Split(block, "\n") {
		t := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(t, "[") {
			continue
		}
		if end := strings.Index(t, "]:"); end > 0 && !strings.Contains(t[:end], "](") {
			if f := strings.Fields(t[end+2:]); len(f) > 0 {
				out = append(out, found{line: i, target: strings.Trim(f[0], "<>")})
			}
		}
	}
	for at := 0; ; {
		i := strings.Index(block[at:], "](")
		if i < 0 {
			break
		}
		at += i + 2
		target, n := destination(block[at:])
		if target != "" {
			out = append(out, found{line: strings.Count(block[:at], "\n"), target: target})
		}
		at += n
	}
	return out
}

// destination reads a link's destination at the start of s (just after "]("): <…> or up to
// the first space or the ")" that closes it. n is how much of s it read.
func destination(s string) (target string, n int) {
	if strings.HasPrefix(s, "<") {
		if end := strings.IndexByte(s, '>'); end > 0 {
			return s[1:end], end + 1
		}
	}
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case r == ')' || unicode.IsSpace(r):
			return s[:i], i
		}
	}
	return s, len(s)
}

// stripCode replaces the text of code spans with spaces (keeping line breaks), so that
// nothing in them reads as a link.
func stripCode(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 1
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		ticks := strings.Repeat("`", n)
		end := strings.Index(string(b[i+n:]), ticks)
		if end < 0 {
			i += n
			continue
		}
		for j := i + n; j < i+n+end; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
		i += 2*n + end
	}
	return string(b)
}

// slugger gives the headings of one page their anchors, numbering repeats as GitHub does.
type slugger map[string]int

// next returns the anchor of the next heading with this text: its slug, then slug-1,
// slug-2, ... for the headings after it with the same slug.
func (s slugger) next(text string) string {
	base := slug(text)
	n, seen := s[base]
	s[base] = n + 1
	if !seen {
		return base
	}
	for {
		a := fmt.Sprintf("%s-%d", base, n)
		if _, taken := s[a]; !taken {
			s[a] = 1
			return a
		}
		n++
	}
}

// slug is GitHub's anchor of a heading's text: lower case, every character dropped that is
// not a letter, a digit, a space, a hyphen or an underscore, and each space made a hyphen.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// repoRoot is the first directory at or above the test's working directory that holds go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Getting started", "getting-started"},
		{"Agents on any framework (AG-UI)", "agents-on-any-framework-ag-ui"},
		{"People: accounts and the review desk", "people-accounts-and-the-review-desk"},
		{"Versions: regenerate, edit, and move between them", "versions-regenerate-edit-and-move-between-them"},
		{"Parley's agents over A2A", "parleys-agents-over-a2a"},
		{"parley chat", "parley-chat"},
		{"Coding agents (ACP)", "coding-agents-acp"},
		{"Microsoft Entra ID", "microsoft-entra-id"},
		{"A -- B", "a----b"},                    // each space and hyphen stays
		{"Cost — per token", "cost--per-token"}, // the dash goes, both spaces stay
		{"snake_case name", "snake_case-name"},
		{"Zürich, 2026!", "zürich-2026"},
		{"What a crash loses?", "what-a-crash-loses"},
		{"", ""},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestHeadingAnchors(t *testing.T) {
	p := parsePage("# Title\n\n## Waiting\n\n```sh\n# not a heading\n## Waiting\n```\n\n### Waiting\n\n## `parley chat`\n\n" +
		"## The [two tools](mcp.md#x) ##\n\n#no-space\n\n    # indented code\n\n## Waiting\n")
	var got []string
	for a := range p.anchors {
		got = append(got, a)
	}
	slices.Sort(got)
	want := []string{"parley-chat", "the-two-tools", "title", "waiting", "waiting-1", "waiting-2"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors = %q, want %q", got, want)
	}
}

func TestBlockLinks(t *testing.T) {
	for _, tc := range []struct {
		block string
		want  []found
	}{
		{"See [Waiting](#waiting) and [API](api.md).", []found{{0, "#waiting"}, {0, "api.md"}}},
		{"![A form](../static/tour-form.png)", []found{{0, "../static/tour-form.png"}}},
		{"[`/api/v1/openapi.json`](../web/openapi.json); that file", []found{{0, "../web/openapi.json"}}},
		{"Not a link: `[x](y.md)`, nor ``a](b``.", nil},
		{"A code span `over\ntwo [x](y.md) lines` [z](z.md)", []found{{1, "z.md"}}},
		{"[MCP](https://modelcontextprotocol.io) servers", []found{{0, "https://modelcontextprotocol.io"}}},
		{`[title](page.md "Its title")`, []found{{0, "page.md"}}},
		{"[angle](<a page.md>)", []found{{0, "a page.md"}}},
		{"[wiki](Foo_(bar).md) after", []found{{0, "Foo_(bar).md"}}},
		{"a text wrapped [over\ntwo lines](two.md)", []found{{1, "two.md"}}},
		{"text\n[label]: docs/api.md#tokens", []found{{1, "docs/api.md#tokens"}}},
	} {
		if got := blockLinks(tc.block); !slices.Equal(got, tc.want) {
			t.Errorf("blockLinks(%q) = %v, want %v", tc.block, got, tc.want)
		}
	}
}

func TestCodeBlocksHoldNoLinks(t *testing.T) {
	p := parsePage("[a](a.md)\n\n```toml\n[b](b.md)\n```\n\n~~~\n[c](c.md)\n```\n[d](d.md)\n~~~\n\n````md\n```\n[e](e.md)\n````  \n[f](f.md)\nand [g\nh](g.md)\n")
	want := []link{{1, "a.md"}, {17, "f.md"}, {19, "g.md"}}
	if !slices.Equal(p.links, want) {
		t.Errorf("links = %v, want %v", p.links, want)
	}
}
