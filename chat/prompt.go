package chat

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/humantext"
)

// errCancelAsked says the person typed /cancel at a question that allows it.
var errCancelAsked = errors.New("cancel")

// ask resolves question q: from the script, or field by field from the person. A 422 asks
// again only the fields the server named, with its messages; a 409 (resolved elsewhere
// meanwhile) is said and the session goes on.
func (s *session) ask(q apiQuestion) (int, error) {
	s.asked++
	s.showQuestion(q)
	if s.script != nil {
		return s.askScripted(q)
	}
	s.asking, s.resolvedAsking = q.ID, false
	defer func() { s.asking, s.resolvedAsking = 0, false }()
	values, files := map[string]any{}, map[string]string{}
	todo := slices.DeleteFunc(slices.Clone(q.Fields), func(f domain.Field) bool { return !f.Kind.Valid() })
	for {
		err := s.promptFields(q, todo, values, files)
		switch {
		case errors.Is(err, errResolved):
			return 0, nil
		case errors.Is(err, io.EOF):
			return 0, s.declineAsked(q)
		case errors.Is(err, errCancelAsked):
			return 0, s.resolve(q, "cancelled", func() (apiQuestion, error) { return s.c.cancel(s.ctx, q.ID) })
		case err != nil:
			return 0, err
		}
		_, err = s.c.answer(s.ctx, q.ID, values, files)
		settled, ae := s.settled(q, err)
		switch {
		case settled:
			return 0, nil
		case ae == nil:
			return 0, err
		case ae.Status == http.StatusUnprocessableEntity && len(ae.Fields) > 0:
			if todo = s.fieldErrors(q, ae.Fields); len(todo) == 0 {
				return 0, err
			}
			for _, f := range todo {
				delete(values, f.Name)
				delete(files, f.Name)
			}
		case ae.Status == http.StatusUnprocessableEntity || ae.Status == http.StatusRequestEntityTooLarge:
			s.problem(err) // asked again, whole
		default:
			return 0, err
		}
	}
}

// fieldErrors prints the server's message for each bad field and returns those fields.
func (s *session) fieldErrors(q apiQuestion, msgs map[string]string) []domain.Field {
	var bad []domain.Field
	for _, f := range q.Fields {
		if msg, ok := msgs[f.Name]; ok {
			s.line(s.style(styleBold, f.Title()+": ") + msg)
			bad = append(bad, f)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(msgs)) {
		if !slices.ContainsFunc(q.Fields, func(f domain.Field) bool { return f.Name == name }) {
			s.line(s.style(styleBold, name+": ") + msgs[name])
		}
	}
	return bad
}

// settled does what every way of resolving question q does with the server's reply err: on
// success the question is this session's; a 409 (resolved elsewhere first) is said. It
// reports whether it was either, and otherwise the API error err is, if it is one.
func (s *session) settled(q apiQuestion, err error) (bool, *apiError) {
	if err == nil {
		s.ours[q.ID] = true
		return true, nil
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		return false, nil
	}
	if ae.Status == http.StatusConflict {
		s.conflict(ae)
		return true, nil
	}
	return false, ae
}

// conflict says that the question was resolved before this answer got there.
func (s *session) conflict(ae *apiError) {
	text := "(this question was already resolved elsewhere"
	if q := ae.Question; q != nil && q.Resolution != nil {
		text = fmt.Sprintf("(this question was already %s elsewhere", q.Resolution.Outcome)
		if q.Resolution.By != "" {
			text += " by " + q.Resolution.By
		}
	}
	s.note(text + ")")
}

// declineAsked declines the question after Ctrl-D, with a reason when a person is there to
// give one.
func (s *session) declineAsked(q apiQuestion) error {
	reason := ""
	if s.tty {
		r, err := s.readLine("Reason for declining (optional): ")
		switch {
		case errors.Is(err, errResolved):
			return nil
		case errors.Is(err, io.EOF):
		case err != nil:
			return err
		default:
			reason = strings.TrimSpace(r)
		}
	}
	return s.resolve(q, "declined", func() (apiQuestion, error) { return s.c.decline(s.ctx, q.ID, reason) })
}

// resolve declines or cancels a question and says so; a question resolved before is said.
func (s *session) resolve(q apiQuestion, done string, call func() (apiQuestion, error)) error {
	_, err := call()
	settled, ae := s.settled(q, err)
	switch {
	case settled:
		if err == nil {
			s.note("(" + done + ")")
		}
		return nil
	case ae != nil && ae.Status == http.StatusUnprocessableEntity:
		s.problem(err)
		return nil
	}
	return err
}

// showQuestion prints the question: who asks, the message, its context, a page to open.
func (s *session) showQuestion(q apiQuestion) {
	s.flushStream() // the agent's words before it asked, if they are still streaming
	head := fmt.Sprintf("Question %d", s.asked)
	if q.Asker != "" {
		head += " from " + q.Asker
	}
	s.line("")
	s.line(s.style(styleBold, head+":") + " " + q.Message)
	for _, l := range contextLines(q.Context, 40) {
		s.line("  " + l)
	}
	for _, r := range q.Refused {
		s.note(fmt.Sprintf("  (%s is not asked: %s)", r.Name, r.Reason))
	}
	if q.Link != "" {
		s.line("  Open this page: " + q.Link)
	}
	if s.tty {
		hint := "Ctrl-D declines"
		if q.AllowCancel {
			hint += ", /cancel cancels"
		}
		s.note("(" + hint + ")")
	}
}

// contextLines writes a question's context as the Markdown export does (a text quoted, an
// object as a list, a list of objects as a table), cut to max lines.
func contextLines(v any, max int) []string {
	text := humantext.ContextMarkdown(v)
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) > max {
		more := len(lines) - max + 1
		lines = append(lines[:max-1], fmt.Sprintf("… (%d more lines)", more))
	}
	return lines
}

// otherRoute returns the text field named "other" that a select's "other" option points to.
func otherRoute(q apiQuestion) (domain.Field, bool) {
	for _, f := range q.Fields {
		if f.Name == domain.OtherChoice && (f.Kind == domain.KindText || f.Kind == domain.KindTextarea) {
			return f, true
		}
	}
	return domain.Field{}, false
}

func offersOther(f domain.Field) bool {
	return f.Kind == domain.KindSelect && slices.ContainsFunc(f.Options, func(o domain.Option) bool { return o.Value == domain.OtherChoice })
}

// promptFields asks the fields in order into values (typed) and files (paths). The "other"
// text field is asked right after its select, and only when "other" is chosen.
func (s *session) promptFields(q apiQuestion, todo []domain.Field, values map[string]any, files map[string]string) error {
	other, hasOther := otherRoute(q)
	selectAsked := slices.ContainsFunc(todo, offersOther)
	if len(q.Fields) == 0 {
		_, err := s.readLine("Press Enter when done (Ctrl-D declines): ")
		return err
	}
	for _, f := range todo {
		if hasOther && selectAsked && f.Name == other.Name {
			continue
		}
		if err := s.promptInto(q, f, values, files); err != nil {
			return err
		}
		if hasOther && offersOther(f) {
			if values[f.Name] != domain.OtherChoice {
				delete(values, other.Name)
			} else if err := s.promptInto(q, other, values, files); err != nil {
				return err
			}
		}
	}
	return nil
}

// promptInto asks one field and keeps its answer; an empty answer leaves the field out.
func (s *session) promptInto(q apiQuestion, f domain.Field, values map[string]any, files map[string]string) error {
	v, path, err := s.promptField(q, f)
	if err != nil {
		return err
	}
	delete(values, f.Name)
	delete(files, f.Name)
	switch {
	case path != "":
		files[f.Name] = path
	case v != nil:
		values[f.Name] = v
	}
	return nil
}

// promptField asks one field until its input can be sent (the server judges the rest).
func (s *session) promptField(q apiQuestion, f domain.Field) (any, string, error) {
	def := domain.FieldDefault(f)
	if s.tty {
		head := f.Title()
		if !f.Required {
			head += " (optional)"
		}
		s.line(s.style(styleBold, head) + prefixed(" — ", fieldHint(f)))
		if f.Description != "" {
			s.line("  " + f.Description)
		}
		for i, o := range f.Options {
			if o.Hint != "" {
				s.line(fmt.Sprintf("  %d) %s (%s)", i+1, o.Text(), o.Hint))
				continue
			}
			s.line(fmt.Sprintf("  %d) %s", i+1, o.Text()))
		}
	}
	prompt := "> "
	if len(def) > 0 {
		prompt = "[" + defaultText(f, def) + "] > "
	}
	for {
		raw, err := s.readField(f, prompt)
		if err != nil {
			return nil, "", err
		}
		if strings.TrimSpace(raw) == "/cancel" && q.AllowCancel {
			return nil, "", errCancelAsked
		}
		input := raw
		if strings.TrimSpace(raw) == "" && len(def) > 0 {
			input = strings.Join(def, ",")
		}
		v, path, msg := parseInput(f, input, time.Now())
		if msg != "" {
			s.line("  " + msg)
			continue
		}
		if !s.tty {
			s.line(f.Title() + ": " + strings.ReplaceAll(input, "\n", "\n  "))
		}
		return v, path, nil
	}
}

// readField reads a field's input: one line, or for a text area the lines up to a lone ".".
func (s *session) readField(f domain.Field, prompt string) (string, error) {
	if f.Kind != domain.KindTextarea {
		return s.readLine(prompt)
	}
	var lines []string
	for {
		l, err := s.readLine(prompt)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(l) == "." {
			return strings.Join(lines, "\n"), nil
		}
		lines, prompt = append(lines, l), "  "
	}
}

// parseInput types what was typed for f as the API takes it. What does not parse is sent as
// typed, so that the server's own message says what is wrong; only a file that cannot be
// read is refused here (msg).
func parseInput(f domain.Field, raw string, now time.Time) (v any, path, msg string) {
	t := strings.TrimSpace(raw)
	if t == "" {
		return nil, "", ""
	}
	switch f.Kind {
	case domain.KindTextarea:
		return raw, "", ""
	case domain.KindNumber:
		if n, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(strings.ToLower(t), "nix") {
			return n, "", ""
		}
	case domain.KindInteger:
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return n, "", ""
		}
	case domain.KindSelect:
		return matchOption(f, t), "", ""
	case domain.KindMultiselect:
		var out []string
		for _, part := range strings.Split(t, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, matchOption(f, part))
			}
		}
		return out, "", ""
	case domain.KindBoolean:
		switch strings.ToLower(t) {
		case "y", "yes", "true", "1", "on":
			return true, "", ""
		case "n", "no", "false", "0", "off":
			return false, "", ""
		}
	case domain.KindDate:
		switch strings.ToLower(t) {
		case "today":
			return now.Format(time.DateOnly), "", ""
		case "tomorrow":
			return now.AddDate(0, 0, 1).Format(time.DateOnly), "", ""
		}
	case domain.KindFile:
		if strings.HasPrefix(t, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				t = filepath.Join(home, t[2:])
			}
		}
		st, err := os.Stat(t)
		switch {
		case err != nil:
			return nil, "", "Cannot read that file: " + err.Error()
		case st.IsDir():
			return nil, "", "That is a folder: give the path of a file."
		}
		return nil, t, ""
	}
	return t, "", ""
}

// matchOption reads a choice: its number in the list, its value or its label.
func matchOption(f domain.Field, t string) string {
	for _, o := range f.Options {
		if o.Value == t {
			return o.Value
		}
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value
	}
	for _, o := range f.Options {
		if strings.EqualFold(o.Value, t) || strings.EqualFold(o.Label, t) {
			return o.Value
		}
	}
	return t
}

// defaultText shows a default as the person would type it.
func defaultText(f domain.Field, def []string) string {
	switch f.Kind {
	case domain.KindBoolean:
		if def[0] == "true" {
			return "yes"
		}
		return "no"
	case domain.KindSelect, domain.KindMultiselect:
		return humantext.AnswerText(f, def) // options by their labels (Question.Check keeps values unique)
	}
	return strings.Join(def, ", ")
}

// fieldHint says what a field takes and its limits, as the person reads them.
func fieldHint(f domain.Field) string {
	var parts []string
	switch f.Kind {
	case domain.KindText:
		parts = append(parts, map[string]string{domain.FormatURI: "a web address (http:// or https://)",
			domain.FormatEmail: "an email address", domain.FormatDateTime: "a date and time such as 2026-11-24 09:30 (UTC)"}[f.Format])
		parts = append(parts, between(f.MinLength, f.MaxLength, "characters"))
		if f.Pattern != "" {
			parts = append(parts, "matching "+f.Pattern)
		}
	case domain.KindTextarea:
		if f.Format == domain.FormatJSON {
			parts = append(parts, "a JSON object")
		}
		parts = append(parts, "end with a line holding only \".\"", between(f.MinLength, f.MaxLength, "characters"))
	case domain.KindNumber, domain.KindInteger:
		what := "a number"
		if f.Kind == domain.KindInteger {
			what = "a whole number"
		}
		parts = append(parts, what, numberRange(f.Min, f.Max))
	case domain.KindSelect:
		parts = append(parts, "a number from the list")
	case domain.KindMultiselect:
		parts = append(parts, "numbers separated by commas")
		if n := between(f.MinItems, f.MaxItems, ""); n != "" {
			parts = append(parts, "pick "+n)
		}
	case domain.KindBoolean:
		parts = append(parts, "y or n")
	case domain.KindDate:
		parts = append(parts, "YYYY-MM-DD (or today, tomorrow)", dateRange(f.MinDate, f.MaxDate))
	case domain.KindFile:
		parts = append(parts, "the path of a file")
	}
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" })
	return strings.Join(parts, ", ")
}

// between words a pair of limits: "at most 3 characters", "between 2 and 5 characters".
func between(lo, hi *int, unit string) string {
	unit = prefixed(" ", unit)
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("between %d and %d%s", *lo, *hi, unit)
	case lo != nil:
		return fmt.Sprintf("at least %d%s", *lo, unit)
	case hi != nil:
		return fmt.Sprintf("at most %d%s", *hi, unit)
	}
	return ""
}

func numberRange(lo, hi *float64) string {
	n := func(f *float64) string { return domain.LimitNumber(*f) }
	switch {
	case lo != nil && hi != nil:
		return "between " + n(lo) + " and " + n(hi)
	case lo != nil:
		return "at least " + n(lo)
	case hi != nil:
		return "at most " + n(hi)
	}
	return ""
}

func dateRange(lo, hi string) string {
	switch {
	case lo != "" && hi != "":
		return "between " + lo + " and " + hi
	case lo != "":
		return lo + " or later"
	case hi != "":
		return hi + " or earlier"
	}
	return ""
}
