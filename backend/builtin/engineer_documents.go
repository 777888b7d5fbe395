package builtin

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// maxTriageBytes bounds how much of one document the platform engineer reads.
const maxTriageBytes = 8 << 20

// maxQuoted bounds a line quoted from a document.
const maxQuoted = 240

// The kinds of document the platform engineer tells apart.
const (
	kindLog        = "log"
	kindTrace      = "trace"
	kindTable      = "table"
	kindText       = "text"
	kindBinary     = "binary"
	kindUnreadable = "unreadable"
)

// triage is what the platform engineer made of one document, without a model: enough to
// show the person that it read the document and what stands out in it.
type triage struct {
	Ref  domain.DocumentRef
	Kind string
	// Lines counts the lines read; Partial says only the first maxTriageBytes were.
	Lines   int
	Partial bool
	// FirstLine is the first line that is not blank, verbatim.
	FirstLine string
	Log       *logSummary
	Trace     *traceSummary
	Table     *tableSummary
}

// tableSummary describes a CSV or TSV document.
type tableSummary struct {
	Rows, Columns int
	// Header is the header line, verbatim.
	Header string
}

// triageReply reads the documents of a message and says, in the person's language, what
// stands out in each.
func triageReply(ctx context.Context, in domain.StepInput, refs []domain.DocumentRef) string {
	var ts []triage
	for _, ref := range refs {
		if in.Documents == nil {
			ts = append(ts, triage{Ref: ref, Kind: kindUnreadable})
			continue
		}
		doc, err := in.Documents.Document(ctx, ref.ID)
		if err != nil {
			ts = append(ts, triage{Ref: ref, Kind: kindUnreadable})
			continue
		}
		ts = append(ts, analyzeDocument(ref, doc.Content))
	}
	return renderTriage(in.Language, ts)
}

// analyzeDocument tells what kind of document content is and summarizes it.
func analyzeDocument(ref domain.DocumentRef, content []byte) triage {
	t := triage{Ref: ref, Kind: kindText}
	if ref.Size == 0 {
		t.Ref.Size = int64(len(content))
	}
	if !(domain.Document{DocumentRef: ref, Content: content}).Readable() {
		t.Kind = kindBinary
		return t
	}
	if len(content) > maxTriageBytes {
		content, t.Partial = content[:maxTriageBytes], true
	}
	text := strings.ToValidUTF8(string(content), "\uFFFD")
	lines := textLines(text)
	t.Lines = len(lines)
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			t.FirstLine = l
			break
		}
	}
	if isTable(ref) {
		if tab, ok := analyzeTable(text, ref); ok {
			t.Kind, t.Table = kindTable, tab
			return t
		}
	}
	if lg, ok := analyzeLog(lines); ok {
		t.Kind, t.Log = kindLog, lg
		return t
	}
	if tr, ok := analyzeTrace(lines); ok {
		t.Kind, t.Trace = kindTrace, tr
	}
	return t
}

// textLines splits text into lines without their line endings; a final line ending does
// not start another line.
func textLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// isTable reports whether a document is CSV or TSV, by its type or its name.
func isTable(ref domain.DocumentRef) bool {
	mt, _, _ := mime.ParseMediaType(ref.MimeType)
	switch mt {
	case "text/csv", "text/tab-separated-values", "application/csv":
		return true
	}
	switch strings.ToLower(path.Ext(ref.Name)) {
	case ".csv", ".tsv":
		return true
	}
	return false
}

// analyzeTable counts the rows and columns of a CSV or TSV document.
func analyzeTable(text string, ref domain.DocumentRef) (*tableSummary, bool) {
	first, _, _ := strings.Cut(text, "\n")
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = -1, true, true
	switch {
	case strings.Count(first, "\t") > strings.Count(first, ","), strings.ToLower(path.Ext(ref.Name)) == ".tsv":
		r.Comma = '\t'
	case strings.Count(first, ";") > strings.Count(first, ","):
		r.Comma = ';'
	}
	tab := &tableSummary{Header: strings.TrimSuffix(first, "\r")}
	for n := 0; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false
		}
		if n == 0 {
			tab.Columns = len(rec)
			continue
		}
		tab.Rows++
	}
	return tab, tab.Columns > 0
}

// renderTriage writes the triage of documents in Markdown, in lang where it can.
func renderTriage(lang string, ts []triage) string {
	var b strings.Builder
	b.WriteString(phrase(lang, "triage.heading") + "\n")
	for _, t := range ts {
		b.WriteString("\n**" + escapeMarkdown(t.Ref.Name) + "** · ")
		switch t.Kind {
		case kindBinary:
			fmt.Fprintf(&b, "%s, %s%s%s.\n", t.Ref.MimeType, t.Ref.SizeLabel(), phrase(lang, "triage.colon"), phrase(lang, "triage.binary"))
			continue
		case kindUnreadable:
			fmt.Fprintf(&b, "%s.\n", phrase(lang, "triage.unreadable"))
			continue
		}
		facts := []string{phrase(lang, "triage."+t.Kind)}
		if t.Trace != nil {
			facts[0] += " (" + t.Trace.Language + ")"
		}
		if t.Kind == kindTable {
			facts = append(facts, fmt.Sprintf(phrase(lang, "triage.rows"), t.Table.Rows, t.Table.Columns))
		} else {
			facts = append(facts, fmt.Sprintf(phrase(lang, "triage.lines"), t.Lines))
		}
		facts = append(facts, t.Ref.SizeLabel())
		if t.Partial {
			facts = append(facts, fmt.Sprintf(phrase(lang, "triage.partial"), domain.ByteSize(maxTriageBytes)))
		}
		b.WriteString(strings.Join(facts, " · ") + "\n\n")
		for _, item := range triageItems(lang, t) {
			b.WriteString("- " + item + "\n")
		}
	}
	return b.String()
}

// triageItems are the findings listed under a document.
func triageItems(lang string, t triage) []string {
	switch t.Kind {
	case kindLog:
		return logItems(lang, t.Log)
	case kindTrace:
		return traceItems(lang, t.Trace)
	case kindTable:
		return []string{phrase(lang, "triage.header") + phrase(lang, "triage.colon") + verbatim(t.Table.Header)}
	}
	if t.FirstLine == "" {
		return nil
	}
	return []string{phrase(lang, "triage.first_line") + phrase(lang, "triage.colon") + verbatim(t.FirstLine)}
}

// verbatim quotes a line of a document as inline code, as it is: cut when long, never
// closed early by its own backticks.
func verbatim(line string) string {
	line = strings.TrimRight(line, " \t\r")
	if utf8.RuneCountInString(line) > maxQuoted {
		line = string([]rune(line)[:maxQuoted]) + "…"
	}
	line = strings.ReplaceAll(line, "\t", "    ")
	if strings.TrimSpace(line) == "" {
		return ""
	}
	ticks := strings.Repeat("`", longestRun(line, '`')+1)
	if strings.HasPrefix(line, "`") || strings.HasSuffix(line, "`") || strings.HasPrefix(line, " ") {
		line = " " + line + " "
	}
	return ticks + line + ticks
}

// escapeMarkdown keeps a document's name from being read as Markdown.
func escapeMarkdown(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", "&lt;").Replace(oneLine(s))
}
