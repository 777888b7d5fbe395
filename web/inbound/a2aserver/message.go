package a2aserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	a2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// What a client's message says: its text, its values, its files, read as answers.

// messageContent reads a client message: its text parts, and the values of its first DataPart
// (under "values", or the data itself).
func messageContent(m *a2a.Message) (string, map[string]any) {
	if m == nil {
		return "", nil
	}
	var texts []string
	var values map[string]any
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			texts = append(texts, p.Text)
		case *a2a.TextPart:
			texts = append(texts, p.Text)
		case a2a.DataPart:
			if values == nil {
				values = dataValues(p.Data)
			}
		case *a2a.DataPart:
			if values == nil {
				values = dataValues(p.Data)
			}
		}
	}
	return strings.Join(texts, "\n"), values
}

func dataValues(d map[string]any) map[string]any {
	if v, ok := d["values"].(map[string]any); ok {
		out := map[string]any{}
		for k, x := range v {
			out[k] = x
		}
		if o, ok := d["outcome"]; ok {
			out["outcome"] = o
		}
		if r, ok := d["reason"]; ok {
			out["reason"] = r
		}
		return out
	}
	return d
}

// declineOf reports a DataPart that declines the question: {"outcome": "declined", "reason": ...}.
func declineOf(values map[string]any) (bool, string) {
	if o, _ := values["outcome"].(string); o == string(domain.Declined) {
		r, _ := values["reason"].(string)
		return true, r
	}
	return false, ""
}

// textValues reads answers written as text by clients that send no DataPart: a JSON object,
// or "name: value" lines naming the question's fields (by name or label).
func textValues(question domain.Question, text string) map[string]any {
	t := strings.TrimSpace(text)
	var obj map[string]any
	if strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &obj) == nil {
		return dataValues(obj)
	}
	names := map[string]string{}
	for _, f := range question.Fields {
		names[strings.ToLower(f.Name)] = f.Name
		names[strings.ToLower(f.Title())] = f.Name
	}
	values := map[string]any{}
	for _, line := range strings.Split(t, "\n") {
		k, v, ok := strings.Cut(strings.TrimLeft(strings.TrimSpace(line), "-* "), ":")
		if !ok {
			continue
		}
		if name, ok := names[strings.ToLower(strings.TrimSpace(k))]; ok {
			values[name] = strings.TrimSpace(v)
		}
	}
	return values
}

// answerForm turns A2A values (or plain text, for a question of one field) into the form
// Parley validates, exactly as a browser would post it.
func answerForm(question domain.Question, text string, values map[string]any) url.Values {
	form := url.Values{}
	if len(values) == 0 && len(question.Fields) == 1 {
		form.Set(question.Fields[0].Name, strings.TrimSpace(text))
		return form
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := values[k].(type) {
		case []any:
			for _, e := range v {
				form.Add(k, fmt.Sprint(e))
			}
		case float64:
			form.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			form.Set(k, strconv.FormatBool(v))
		case nil:
		default:
			form.Set(k, fmt.Sprint(v))
		}
	}
	return form
}

// messageFiles takes the files of an A2A message (FileParts with bytes) as attachments,
// checked like the browser's. Files given by URI are not fetched: a client sends bytes.
func (s *Server) messageFiles(m *a2a.Message) ([]domain.File, error) {
	if m == nil {
		return nil, nil
	}
	var files []domain.File
	for i, p := range m.Parts {
		var fp a2a.FilePart
		switch p := p.(type) {
		case a2a.FilePart:
			fp = p
		case *a2a.FilePart:
			fp = *p
		default:
			continue
		}
		fb, ok := fp.File.(a2a.FileBytes)
		if !ok {
			if pb, isPtr := fp.File.(*a2a.FileBytes); isPtr {
				fb, ok = *pb, true
			}
		}
		if !ok {
			return nil, domain.Errorf(domain.EINVALID, "Part %d is a file by URI; send the file's bytes instead.", i+1)
		}
		content, err := base64.StdEncoding.DecodeString(fb.Bytes)
		if err != nil {
			return nil, domain.Errorf(domain.EINVALID, "Part %d: the file's bytes are not valid base64.", i+1)
		}
		name := fb.Name
		if name == "" {
			name = fmt.Sprintf("file-%d%s", i+1, domain.Extension(fb.MimeType))
		}
		f, err := s.opts.CheckFile(name, content)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) > s.opts.MaxFiles {
		return nil, domain.Errorf(domain.EINVALID, "Attach at most %d files to one message (this one has %d).", s.opts.MaxFiles, len(files))
	}
	return files, nil
}

// fileAnswers gives the files of a message to the question's file fields, in order.
func fileAnswers(q domain.Question, files []domain.File) map[string]domain.File {
	out := map[string]domain.File{}
	for _, f := range q.Fields {
		if f.Kind == domain.KindFile && len(files) > 0 {
			out[f.Name], files = files[0], files[1:]
		}
	}
	return out
}
