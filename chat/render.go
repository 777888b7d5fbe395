package chat

import (
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// A terminal's Markdown, written here on the goldmark parser the pages use: headings, bold,
// italics, code, lists, quotes, tables, links and rules, wrapped to the terminal's width
// and coloured with 256-colour styles for a dark or a light background. (A library for it
// would bring a second Unicode table, a layout engine and text/template, whose reflection
// keeps every exported method of every type in the binary.)

// termMarkdown is the parser of agents' Markdown for the terminal: GitHub's flavour. It is
// made on first use, so that parley serve does not make it.
var termMarkdown = sync.OnceValue(func() goldmark.Markdown { return goldmark.New(goldmark.WithExtensions(extension.GFM)) })

// palette is the colours of a style, as SGR parameters.
type palette struct {
	heading, code, codeBlock, link, quote, rule string
}

// palettes are the styles GLAMOUR_STYLE names (the name the renderer parley chat used
// before had, kept so that settings go on working); any other is dark.
var palettes = map[string]palette{
	"dark":  {heading: "1;38;5;39", code: "38;5;203;48;5;236", codeBlock: "38;5;251", link: "4;38;5;30", quote: "38;5;244", rule: "38;5;240"},
	"light": {heading: "1;38;5;27", code: "38;5;203;48;5;254", codeBlock: "38;5;237", link: "4;38;5;36", quote: "38;5;242", rule: "38;5;250"},
}

// termRenderer renders Markdown for a terminal width columns wide.
type termRenderer struct {
	p     palette
	width int
}

// margin is the indent of every line, as the blocks of a reply sit under the agent's name.
const margin = "  "

// render renders src into lines, blank lines between blocks, none at the ends.
func (r termRenderer) render(src string) []string {
	source := []byte(src)
	doc := termMarkdown().Parser().Parse(text.NewReader(source))
	lines := r.blocks(doc, source, max(r.width-2*len(margin), 10))
	for i, l := range lines {
		if l != "" {
			lines[i] = margin + l
		}
	}
	return lines
}

// blocks renders the children of n, a blank line between each.
func (r termRenderer) blocks(n ast.Node, src []byte, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b := r.block(c, src, width)
		if len(b) == 0 {
			continue
		}
		if len(out) > 0 && !isTight(n) {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	return out
}

// isTight reports whether n is the item of a tight list, whose blocks follow each other
// without a blank line.
func isTight(n ast.Node) bool {
	if item, ok := n.(*ast.ListItem); ok {
		if l, ok := item.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

// block renders one block.
func (r termRenderer) block(n ast.Node, src []byte, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inline(n, src, ""), width)
	case *ast.Heading:
		return wrap(style(r.p.heading, strings.Repeat("#", n.Level)+" ")+r.inline(n, src, r.p.heading), width)
	case *ast.ThematicBreak:
		return []string{style(r.p.rule, strings.Repeat("─", min(width, 40)))}
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		var out []string
		for _, l := range strings.Split(strings.TrimRight(string(n.Lines().Value(src)), "\n"), "\n") {
			l = strings.ReplaceAll(l, "\t", "    ")
			for _, part := range strings.Split(ansi.Hardwrap(l, width-2, false), "\n") {
				out = append(out, "  "+style(r.p.codeBlock, part))
			}
		}
		return out
	case *ast.Blockquote:
		out := r.blocks(n, src, width-2)
		for i, l := range out {
			out[i] = style(r.p.quote, "│") + " " + l
		}
		return out
	case *ast.List:
		return r.list(n, src, width)
	case *ast.HTMLBlock:
		return wrap(strings.TrimRight(string(n.Lines().Value(src)), "\n"), width)
	case *east.Table:
		return r.table(n, src, width)
	}
	return nil
}

// list renders a list: its items after a bullet or their number, their lines under the
// first.
func (r termRenderer) list(l *ast.List, src []byte, width int) []string {
	var out []string
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		indent := strings.Repeat(" ", ansi.StringWidth(marker))
		lines := r.blocks(item, src, width-len(indent))
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		if len(lines) == 0 {
			lines = []string{""}
		}
		for i, line := range lines {
			switch {
			case i == 0:
				out = append(out, strings.TrimRight(marker+line, " "))
			case line == "":
				out = append(out, "")
			default:
				out = append(out, indent+line)
			}
		}
	}
	return out
}

// table renders a table in box lines, its head in bold, each cell wrapped in its column;
// when the table does not fit, its widest columns are narrowed.
func (r termRenderer) table(t *east.Table, src []byte, width int) []string {
	var rows [][]string
	aligns := t.Alignments
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inline(c, src, ""))
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c), 1)
		}
	}
	// Too wide for the terminal: the widest column gives a column at a time.
	for room := width - 3*cols - 1; room >= cols; {
		widest, total := 0, 0
		for i, w := range widths {
			total += w
			if w > widths[widest] {
				widest = i
			}
		}
		if total <= room {
			break
		}
		widths[widest]--
	}
	rule := func(left, mid, right string) string {
		parts := make([]string, cols)
		for i, w := range widths {
			parts[i] = strings.Repeat("─", w+2)
		}
		return style(r.p.rule, left+strings.Join(parts, mid)+right)
	}
	bar := style(r.p.rule, "│")
	out := []string{rule("┌", "┬", "┐")}
	for ri, row := range rows {
		wrapped := make([][]string, cols)
		height := 1
		for i := range cols {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			if ri == 0 {
				cell = styleWords("1", ansi.Strip(cell))
			}
			wrapped[i] = wrap(cell, widths[i])
			height = max(height, len(wrapped[i]))
		}
		for h := range height {
			var b strings.Builder
			b.WriteString(bar)
			for i, w := range widths {
				cell := ""
				if h < len(wrapped[i]) {
					cell = wrapped[i][h]
				}
				pad := max(0, w-ansi.StringWidth(cell))
				left := 0
				if i < len(aligns) && aligns[i] == east.AlignRight {
					left = pad
				} else if i < len(aligns) && aligns[i] == east.AlignCenter {
					left = pad / 2
				}
				b.WriteString(" " + strings.Repeat(" ", left) + cell + strings.Repeat(" ", pad-left) + " " + bar)
			}
			out = append(out, b.String())
		}
		if ri == 0 {
			out = append(out, rule("├", "┼", "┤"))
		}
	}
	return append(out, rule("└", "┴", "┘"))
}

// inline renders the inline children of n on one line, each word styled on its own (with
// the styles around it, sgr) so that wrapping never carries a style to the next line.
func (r termRenderer) inline(n ast.Node, src []byte, sgr string) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.WriteString(styleWords(sgr, string(c.Segment.Value(src))))
			if c.HardLineBreak() {
				b.WriteString("\n")
			} else if c.SoftLineBreak() {
				b.WriteString(" ")
			}
		case *ast.String:
			b.WriteString(styleWords(sgr, string(c.Value)))
		case *ast.Emphasis:
			b.WriteString(r.inline(c, src, join(sgr, map[bool]string{true: "1", false: "3"}[c.Level >= 2])))
		case *east.Strikethrough:
			b.WriteString(r.inline(c, src, join(sgr, "9")))
		case *ast.CodeSpan:
			var code strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if s, ok := t.(*ast.Text); ok {
					code.Write(s.Segment.Value(src))
				}
			}
			b.WriteString(styleWords(join(sgr, r.p.code), code.String()))
		case *ast.Link:
			label := r.inline(c, src, join(sgr, r.p.link))
			b.WriteString(label)
			if dest := string(c.Destination); dest != "" && ansi.Strip(label) != dest {
				b.WriteString(" " + styleWords(sgr, dest))
			}
		case *ast.AutoLink:
			b.WriteString(styleWords(join(sgr, r.p.link), string(c.URL(src))))
		case *ast.Image:
			b.WriteString(styleWords(sgr, "Image: "+ansi.Strip(r.inline(c, src, ""))+" → "+string(c.Destination)))
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.WriteString(styleWords(sgr, string(seg.Value(src))))
			}
		case *east.TaskCheckBox:
			if c.IsChecked {
				b.WriteString("[✓] ")
			} else {
				b.WriteString("[ ] ")
			}
		default:
			b.WriteString(r.inline(c, src, sgr))
		}
	}
	return b.String()
}

// wrap wraps text at width columns, keeping its hard line breaks.
func wrap(text string, width int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range strings.Split(ansi.Wrap(l, width, ""), "\n") {
			out = append(out, strings.TrimRight(w, " "))
		}
	}
	return out
}

// styleWords styles each word of s with sgr, leaving the spaces between them plain.
func styleWords(sgr, s string) string {
	if sgr == "" {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if w != "" {
			words[i] = style(sgr, w)
		}
	}
	return strings.Join(words, " ")
}

// style wraps s in the SGR parameters sgr.
func style(sgr, s string) string {
	if sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[m"
}

// join joins SGR parameters.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ";" + b
}
