package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/parley-chat/parley/domain"
)

// answerScript is an --answers file: the first message, and one entry per question in the
// order the questions come, so that a conversation runs unattended (in CI, say).
type answerScript struct {
	Message string           `json:"message" yaml:"message"`
	Answers []map[string]any `json:"answers" yaml:"answers"`
	next    int
	dir     string // where the file is: file paths in it are relative to it
}

// loadAnswers reads an answers file: JSON or YAML by its extension, else JSON then YAML.
func loadAnswers(path string) (*answerScript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--answers: %w", err)
	}
	var s answerScript
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		err = decodeJSONAnswers(b, &s)
	case ".yaml", ".yml":
		err = decodeYAMLAnswers(b, &s)
	default:
		if err = decodeJSONAnswers(b, &s); err != nil {
			s = answerScript{}
			err = decodeYAMLAnswers(b, &s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--answers %s: %w", path, err)
	}
	s.dir = filepath.Dir(path)
	for i, entry := range s.Answers {
		if entry == nil {
			return nil, fmt.Errorf("--answers %s: answer %d is empty: give the values by field name, or decline or cancel", path, i+1)
		}
		for k, v := range entry {
			entry[k] = plainValue(v)
		}
	}
	return &s, nil
}

func decodeJSONAnswers(b []byte, s *answerScript) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(s)
}

func decodeYAMLAnswers(b []byte, s *answerScript) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// plainValue turns what YAML may decode (a timestamp, a map with any keys, a list of
// numbers) into the JSON values the API takes.
func plainValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.UTC().Format(time.RFC3339)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = plainValue(item)
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

// scripted is what an entry says to do with a question: answer with values (and files, by
// path), decline with a reason, or cancel.
type scripted struct {
	values  map[string]any
	files   map[string]string
	decline *string
	cancel  bool
}

// errNoScript says the answers ran out before the questions did.
var errNoScript = errors.New("no scripted answer")

// take returns what the next entry says about question q. The keys decline and cancel
// resolve the question that way unless it has a field of that name.
func (s *answerScript) take(q apiQuestion) (scripted, error) {
	if s.next >= len(s.Answers) {
		return scripted{}, errNoScript
	}
	entry := s.Answers[s.next]
	s.next++
	fields := map[string]domain.Field{}
	for _, f := range q.Fields {
		fields[f.Name] = f
	}
	if v, ok := entry["decline"]; ok {
		if _, isField := fields["decline"]; !isField {
			reason := ""
			if r, ok := v.(string); ok {
				reason = r
			}
			return scripted{decline: &reason}, nil
		}
	}
	if v, ok := entry["cancel"]; ok {
		if _, isField := fields["cancel"]; !isField && v != false {
			return scripted{cancel: true}, nil
		}
	}
	out := scripted{values: map[string]any{}, files: map[string]string{}}
	for name, v := range entry {
		if f, ok := fields[name]; ok && f.Kind == domain.KindFile {
			path, isPath := v.(string)
			if !isPath {
				return scripted{}, fmt.Errorf("answer %d: %s is a file field: give the path of the file", s.next, name)
			}
			if !filepath.IsAbs(path) {
				path = filepath.Join(s.dir, path)
			}
			out.files[name] = path
			continue
		}
		out.values[name] = v
	}
	return out, nil
}

// left is how many entries were not used.
func (s *answerScript) left() int { return len(s.Answers) - s.next }

// askScripted resolves q with the script's next entry.
func (s *session) askScripted(q apiQuestion) (int, error) {
	sc, err := s.script.take(q)
	if errors.Is(err, errNoScript) {
		for _, f := range q.Fields {
			s.line(fmt.Sprintf("  %s (%s%s)", f.Name, f.Kind, map[bool]string{true: ", required"}[f.Required]))
		}
		return ExitNoScript, fmt.Errorf("no scripted answer for question %d", s.asked)
	}
	if err != nil {
		return ExitRejected, err
	}
	switch {
	case sc.decline != nil:
		s.note("(declining" + prefixed(": ", *sc.decline) + ")")
		_, err = s.c.decline(s.ctx, q.ID, *sc.decline)
	case sc.cancel:
		s.note("(cancelling)")
		_, err = s.c.cancel(s.ctx, q.ID)
	default:
		shown, _ := json.Marshal(sc.values)
		s.line("answer: " + string(shown))
		for name, path := range sc.files {
			s.line(fmt.Sprintf("answer: %s = file %s", name, path))
		}
		_, err = s.c.answer(s.ctx, q.ID, sc.values, sc.files)
	}
	settled, ae := s.settled(q, err)
	switch {
	case settled:
		return 0, nil
	case ae != nil && (ae.Status == http.StatusUnprocessableEntity || ae.Status == http.StatusRequestEntityTooLarge):
		if len(ae.Fields) == 0 {
			s.problem(err)
		}
		s.fieldErrors(q, ae.Fields)
		return ExitRejected, fmt.Errorf("the server refused the scripted answer to question %d", s.asked)
	}
	return 1, err
}
