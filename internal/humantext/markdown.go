package humantext

import "strings"

// ContextMarkdown writes a question's context as Markdown, for the export and the terminal
// (parley chat): a text quoted, as messages are; an object or a list as a nested list, a
// list of objects as a table; "" when there is none. It keeps the page's limits.
func ContextMarkdown(v any) string {
	n, ok := ContextTree(v)
	if !ok {
		return ""
	}
	if n.Kind == CtxMarkdown {
		return Quote(n.Text)
	}
	var b strings.Builder
	writeContext(&b, n, "")
	return strings.TrimRight(b.String(), "\n")
}

// writeContext writes one piece of a context, indent deep in the list that holds it.
func writeContext(b *strings.Builder, n ContextNode, indent string) {
	item := func(head string, v ContextNode) {
		if v.Kind == CtxText || v.Inline {
			b.WriteString(strings.TrimRight(indent+"- "+head+OneLine(v.InlineText()), " ") + "\n")
			return
		}
		b.WriteString(strings.TrimRight(indent+"- "+strings.TrimSuffix(head, " "), " ") + "\n")
		if v.Kind == CtxTable {
			b.WriteString("\n")
		}
		writeContext(b, v, indent+"  ")
	}
	switch n.Kind {
	case CtxObject:
		for _, f := range n.Fields {
			item(OneLine(f.Key)+": ", f.Value)
		}
	case CtxList:
		for _, it := range n.Items {
			item("", it)
		}
	case CtxTable:
		row := func(cells []string) {
			b.WriteString(indent + "|")
			for _, c := range cells {
				b.WriteString(" " + strings.ReplaceAll(OneLine(c), "|", `\|`) + " |")
			}
			b.WriteString("\n")
		}
		row(n.Columns)
		b.WriteString(indent + "|" + strings.Repeat(" --- |", len(n.Columns)) + "\n")
		for _, r := range n.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = c.InlineText()
			}
			row(cells)
		}
		b.WriteString("\n")
		if m := n.MoreLabel(); m != "" {
			b.WriteString(indent + m + "\n\n")
		}
		return
	default:
		b.WriteString(indent + OneLine(n.Text) + "\n")
		return
	}
	if m := n.MoreLabel(); m != "" && !n.Inline {
		b.WriteString(indent + "- " + m + "\n")
	}
}

// Quote writes text as a Markdown block quote, line by line.
func Quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// OneLine keeps a text on one line of a list or heading.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
