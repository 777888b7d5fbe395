package a2a

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// maxDataShown bounds a DataPart shown as JSON.
const maxDataShown = 4 << 10

// rendered is what a list of parts shows: Markdown text, and the forms they carry.
type rendered struct {
	text  string
	forms []domain.Question
}

// render turns parts into what the person sees:
//   - a TextPart is Markdown, as it is;
//   - a DataPart in the structured response shape ({is_task_complete, require_user_input,
//     content, metadata}) is its content, and metadata.input_fields a form;
//   - any other DataPart is shown as JSON, a file as a link or a note;
//   - a part Parley could not read is skipped with a note.
func render(parts []sdk.Part) rendered {
	var r rendered
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		// Notes and blocks go on lines of their own.
		switch t := b.String(); {
		case t == "" || strings.HasSuffix(t, "\n\n"):
		case strings.HasSuffix(t, "\n"):
			b.WriteString("\n")
		default:
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	for _, p := range parts {
		switch p := p.(type) {
		case sdk.TextPart:
			b.WriteString(p.Text)
		case sdk.DataPart:
			if kind, ok := p.Metadata[skippedKindKey].(string); ok {
				add(fmt.Sprintf("_(Parley skipped a part of kind %q that it cannot show.)_", kind))
				continue
			}
			content, q, ok := structured(p.Data)
			switch {
			case q != nil:
				r.forms = append(r.forms, *q)
			case ok:
				b.WriteString(content)
			default:
				add(dataBlock(p.Data))
			}
		case sdk.FilePart:
			add(fileLine(p))
		}
	}
	r.text = b.String()
	return r
}

// structured reads a DataPart in the structured response shape. It returns the content to
// show, or the form it asks for; ok is false for data of any other shape.
func structured(data map[string]any) (content string, q *domain.Question, ok bool) {
	_, hasContent := data["content"]
	_, hasComplete := data["is_task_complete"]
	_, hasRequire := data["require_user_input"]
	if !hasContent && !hasComplete && !hasRequire {
		return "", nil, false
	}
	if b, err := json.Marshal(data); err == nil {
		if form, ok := domain.ParseUserInputMetaData(domain.UserInputMetaDataPrefix + " " + string(b)); ok {
			return "", &form, true
		}
	}
	switch c := data["content"].(type) {
	case string:
		return c, nil, true
	case nil:
		return "", nil, true
	default:
		return dataBlock(map[string]any{"content": c}), nil, true
	}
}

// dataBlock shows data as a fenced JSON block, cut when long.
func dataBlock(data map[string]any) string {
	b, err := json.MarshalIndent(data, "", "  ")
	if err != nil {
		return ""
	}
	s := string(b)
	if len(s) > maxDataShown {
		s = strings.ToValidUTF8(s[:maxDataShown], "") + "\n…"
	}
	return "```json\n" + s + "\n```\n"
}

// fileLine shows a file: a link when it has a web address, a note otherwise.
func fileLine(p sdk.FilePart) string {
	switch f := p.File.(type) {
	case sdk.FileURI:
		name := f.Name
		if name == "" {
			name = f.URI
		}
		if strings.HasPrefix(f.URI, "https://") || strings.HasPrefix(f.URI, "http://") {
			return fmt.Sprintf("📎 [%s](%s)", escapeLink(name), f.URI)
		}
		return fmt.Sprintf("📎 %s (%s)", name, f.URI)
	case sdk.FileBytes:
		name := f.Name
		if name == "" {
			name = "a file"
		}
		return fmt.Sprintf("_(The agent attached %s, which Parley does not show.)_", name)
	}
	return ""
}

func escapeLink(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
}

// plainText is the text of a status message for progress and questions: text parts and
// structured content, forms left out.
func plainText(m *sdk.Message) string {
	if m == nil {
		return ""
	}
	return strings.TrimSpace(render(m.Parts).text)
}

// partsSize is roughly how many bytes the parts carry.
func partsSize(parts []sdk.Part) int {
	n := 0
	for _, p := range parts {
		switch p := p.(type) {
		case sdk.TextPart:
			n += len(p.Text)
		case sdk.DataPart:
			b, _ := json.Marshal(p.Data)
			n += len(b)
		case sdk.FilePart:
			if f, ok := p.File.(sdk.FileBytes); ok {
				n += len(f.Bytes)
			}
		}
	}
	return n
}
