package views

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/internal/humantext"
)

// TimelineMarkdown writes a conversation's timeline as a Markdown document: a heading with
// who, which agent and when, then each entry in order with its time and author. Message
// texts are kept as written, quoted so that their own Markdown cannot break the document's;
// so is a question's context when it is a text.
func TimelineMarkdown(d TimelineData) string {
	var b strings.Builder
	c := d.Conversation
	fmt.Fprintf(&b, "# %s\n\n", humantext.OneLine(c.Title))
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
		fmt.Fprintf(&b, "\n### %s · %s %s\n", e.At.UTC().Format("2006-01-02 15:04:05"), humantext.OneLine(e.Who), humantext.OneLine(e.Summary))
		if e.Text != "" {
			b.WriteString("\n" + humantext.Quote(e.Text) + "\n")
		}
		if e.Question != nil {
			if md := humantext.ContextMarkdown(e.Question.Context); md != "" {
				b.WriteString("\nContext:\n\n" + md + "\n")
			}
			b.WriteString("\nFields:\n")
			for _, f := range e.Question.Fields {
				fmt.Fprintf(&b, "- %s (%s)\n", humantext.OneLine(f.Title()), humantext.OneLine(FieldKindLabel(f)))
			}
		}
		if len(e.Answers) > 0 {
			b.WriteString("\nAnswers:\n")
			for _, a := range e.Answers {
				fmt.Fprintf(&b, "- %s: %s\n", humantext.OneLine(a.Field), humantext.OneLine(a.Value))
			}
		}
		if len(e.Documents) > 0 {
			b.WriteString("\nDocuments:\n")
			for _, doc := range e.Documents {
				fmt.Fprintf(&b, "- %s (%s, %s, sha256 %s)\n", humantext.OneLine(doc.Name), doc.MimeType, doc.SizeLabel(), doc.SHA256)
			}
		}
	}
	return b.String()
}
