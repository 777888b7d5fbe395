package views

import (
	"fmt"
	"strings"
)

// TimelineMarkdown writes a conversation's timeline as a Markdown document: a heading with
// who, which agent and when, then each entry in order with its time and author. Message
// texts are kept as written, quoted so that their own Markdown cannot break the document's;
// so is a question's context when it is a text.
func TimelineMarkdown(d TimelineData) string {
	var b strings.Builder
	c := d.Conversation
	fmt.Fprintf(&b, "# %s\n\n", oneLine(c.Title))
	fmt.Fprintf(&b, "- Person: %s\n- Agent: %s\n- State: %s\n- Started: %s\n", c.Owner, d.AgentTitle, c.State.Label(), c.CreatedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	if c.Language != "" {
		fmt.Fprintf(&b, "- Language: %s\n", c.Language)
	}
	if len(d.Versions) > 1 {
		fmt.Fprintf(&b, "- Version: %d of %d", d.Version+1, len(d.Versions))
		if d.Version == c.Version {
			b.WriteString(" (the one shown)")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Timeline\n")
	for _, e := range d.Entries {
		fmt.Fprintf(&b, "\n### %s · %s %s\n", e.At.UTC().Format("2006-01-02 15:04:05"), oneLine(e.Who), oneLine(e.Summary))
		if e.Text != "" {
			b.WriteString("\n" + quote(e.Text) + "\n")
		}
		if e.Question != nil {
			if md := ContextMarkdown(e.Question.Context); md != "" {
				b.WriteString("\nContext:\n\n" + md + "\n")
			}
			b.WriteString("\nFields:\n")
			for _, f := range e.Question.Fields {
				fmt.Fprintf(&b, "- %s (%s)\n", oneLine(f.Title()), oneLine(FieldKindLabel(f)))
			}
		}
		if len(e.Answers) > 0 {
			b.WriteString("\nAnswers:\n")
			for _, a := range e.Answers {
				fmt.Fprintf(&b, "- %s: %s\n", oneLine(a.Field), oneLine(a.Value))
			}
		}
		if len(e.Documents) > 0 {
			b.WriteString("\nDocuments:\n")
			for _, doc := range e.Documents {
				fmt.Fprintf(&b, "- %s (%s, %s, sha256 %s)\n", oneLine(doc.Name), doc.MimeType, doc.SizeLabel(), doc.SHA256)
			}
		}
	}
	return b.String()
}

// ContextMarkdown writes a question's context as Markdown, for the export and the terminal
// (parley chat): a text quoted, as messages are; an object or a list as a nested list, a
// list of objects as a table; "" when there is none. It keeps the page's limits.
func ContextMarkdown(v any) string {
	n, ok := contextTree(v)
	if !ok {
		return ""
	}
	if n.Kind == ctxMarkdown {
		return quote(n.Text)
	}
	var b strings.Builder
	writeContext(&b, n, "")
	return strings.TrimRight(b.String(), "\n")
}

// writeContext writes one piece of a context, indent deep in the list that holds it.
func writeContext(b *strings.Builder, n contextNode, indent string) {
	item := func(head string, v contextNode) {
		if v.Kind == ctxText || v.Inline {
			b.WriteString(strings.TrimRight(indent+"- "+head+oneLine(v.inline()), " ") + "\n")
			return
		}
		b.WriteString(strings.TrimRight(indent+"- "+strings.TrimSuffix(head, " "), " ") + "\n")
		if v.Kind == ctxTable {
			b.WriteString("\n")
		}
		writeContext(b, v, indent+"  ")
	}
	switch n.Kind {
	case ctxObject:
		for _, f := range n.Fields {
			item(oneLine(f.Key)+": ", f.Value)
		}
	case ctxList:
		for _, it := range n.Items {
			item("", it)
		}
	case ctxTable:
		row := func(cells []string) {
			b.WriteString(indent + "|")
			for _, c := range cells {
				b.WriteString(" " + strings.ReplaceAll(oneLine(c), "|", `\|`) + " |")
			}
			b.WriteString("\n")
		}
		row(n.Columns)
		b.WriteString(indent + "|" + strings.Repeat(" --- |", len(n.Columns)) + "\n")
		for _, r := range n.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = c.inline()
			}
			row(cells)
		}
		b.WriteString("\n")
		if m := n.moreLabel(); m != "" {
			b.WriteString(indent + m + "\n\n")
		}
		return
	default:
		b.WriteString(indent + oneLine(n.Text) + "\n")
		return
	}
	if m := n.moreLabel(); m != "" && !n.Inline {
		b.WriteString(indent + "- " + m + "\n")
	}
}

// quote writes text as a Markdown block quote, line by line.
func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// oneLine keeps a text on one line of a list or heading.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
