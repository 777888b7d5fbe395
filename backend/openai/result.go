package openai

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// invalidResult is the tool result for a call whose arguments could not be used.
func invalidResult(problem string) string {
	return marshalCompact(map[string]string{"error": problem, "expected": expectedShape})
}

// notAskedResult is the tool result for a good call in a reply that also had a bad one:
// nothing was asked, so that the corrected reply asks everything at once.
const notAskedResult = `{"error":"Not asked, because another tool call in the same reply could not be used. Send all your request_user_input calls again, corrected."}`

// formAnswer is how the resolution of a form written as text reaches the model: the
// person's message with the answers, field by field, in the form's order.
func formAnswer(q domain.Question, res *domain.Resolution) string {
	if res.Outcome != domain.Answered {
		s := fmt.Sprintf("(I did not fill in your form: %s.", res.Outcome)
		if res.Reason != "" {
			s += " " + res.Reason
		}
		return s + ")"
	}
	var b strings.Builder
	b.WriteString("My answers to your form:")
	seen := map[string]bool{}
	for _, f := range q.Fields {
		seen[f.Name] = true
		if v, ok := res.Values[f.Name]; ok {
			fmt.Fprintf(&b, "\n- %s: %s", f.Name, formatValue(v))
		} else {
			fmt.Fprintf(&b, "\n- %s: (left empty)", f.Name)
		}
	}
	var extra []string
	for name := range res.Values {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		fmt.Fprintf(&b, "\n- %s: %s", name, formatValue(res.Values[name]))
	}
	if note := q.DeclineReason(); note != "" {
		b.WriteString("\n" + note)
	}
	return b.String()
}

// formatValue writes an answer as a person would: numbers without trailing zeros, lists
// joined with commas.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case []string:
		return strings.Join(x, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			parts[i] = formatValue(item)
		}
		return strings.Join(parts, ", ")
	}
	return marshalCompact(v)
}
