package domain

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// UserInputRequest is the request_user_input(prompt, context, request_type) tool call that
// LLM agents and the built-in workflow agents use to ask. Fields is optional: without it the
// request type decides the form (see Question).
type UserInputRequest struct {
	Prompt string `json:"prompt"`
	// Context is the supporting data the person decides by: a text, or an object (a list is
	// the options of a selection). The question carries it as it is.
	Context     any         `json:"context,omitempty"`
	RequestType RequestType `json:"request_type"`
	Fields      []Field     `json:"fields,omitempty"`
}

// optionListKeys are the context keys a selection's options are looked for under, in order.
var optionListKeys = []string{"options", "choices", "venues", "items"}

// Question maps the tool call onto the one question model. Explicit fields win; otherwise
// a clarification asks for a free answer, a selection offers the options found in Context
// (plus "Something else"), an approval asks to approve or reject with an optional comment.
// An unknown or empty request type is a clarification, and so is a selection without options.
func (r UserInputRequest) Question() Question {
	t := RequestType(strings.ToLower(strings.TrimSpace(string(r.RequestType))))
	if t != RequestSelection && t != RequestApproval {
		t = RequestClarification
	}
	q := Question{Message: r.Prompt, Type: t, Context: r.Context}
	if len(r.Fields) > 0 {
		q.Fields = make([]Field, 0, len(r.Fields))
		for _, f := range r.Fields {
			q.Fields = append(q.Fields, normalizeField(f))
		}
		return q
	}
	switch t {
	case RequestApproval:
		q.Fields = []Field{
			{Name: "decision", Label: "Decision", Kind: KindSelect, Required: true,
				Options: []Option{{Value: "approve", Label: "Approve"}, {Value: "reject", Label: "Reject"}}},
			{Name: "comment", Label: "Comment", Kind: KindTextarea},
		}
		return q
	case RequestSelection:
		if opts := contextOptions(r.Context); len(opts) > 0 {
			opts = append(opts, Option{Value: OtherChoice, Label: "Something else (say which below)"})
			q.Fields = []Field{
				{Name: "choice", Label: "Your choice", Kind: KindSelect, Required: true, Options: opts},
				{Name: "other", Label: "Something else", Kind: KindText,
					Description: "If none of these fits, say what you would prefer."},
			}
			return q
		}
	}
	q.Fields = []Field{{Name: "answer", Label: "Your answer", Kind: KindTextarea, Required: true}}
	return q
}

// OtherChoice is the value of the selection option that points to the free "other" answer.
const OtherChoice = "other"

// contextOptions finds the list of things to choose from in a selection's context: the
// context itself when it is a list, else under a known key, else the first list (by key
// order) in it.
func contextOptions(v any) []Option {
	// A round trip through JSON turns Go values ([]string, structs) into the decoded shapes.
	var ctx map[string]any
	if b, err := json.Marshal(v); err == nil {
		var decoded any
		if json.Unmarshal(b, &decoded) == nil {
			switch x := decoded.(type) {
			case []any:
				ctx = map[string]any{"options": x}
			case map[string]any:
				ctx = x
			}
		}
	}
	var list []any
	for _, k := range optionListKeys {
		if l, ok := ctx[k].([]any); ok && len(l) > 0 {
			list = l
			break
		}
	}
	if list == nil {
		keys := make([]string, 0, len(ctx))
		for k := range ctx {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if l, ok := ctx[k].([]any); ok && len(l) > 0 {
				list = l
				break
			}
		}
	}
	var opts []Option
	for _, item := range list {
		opts = append(opts, contextOption(item))
	}
	return cleanOptions(opts)
}

// contextOption turns one item of a context list into an option; objects get a label with
// the details a person chooses by, as in "Pike Loft — capacity 40, $1,200".
func contextOption(item any) Option {
	m, ok := item.(map[string]any)
	if !ok {
		s, _ := scalarString(item)
		return Option{Value: s}
	}
	value := firstScalar(m, "id", "value", "name", "label", "title")
	name := firstScalar(m, "name", "label", "title")
	if name == "" {
		name = value
	}
	var details []string
	if s := firstScalar(m, "location", "address"); s != "" {
		details = append(details, s)
	}
	if s := firstScalar(m, "capacity"); s != "" {
		details = append(details, "capacity "+s)
	}
	if s := price(m); s != "" {
		details = append(details, s)
	}
	label := name
	if len(details) > 0 {
		label += " — " + strings.Join(details, ", ")
	}
	if label == value {
		label = ""
	}
	return Option{Value: value, Label: label}
}

// price formats a numeric price with its currency ("$1,200", "€89.50", "300 CHF"); a price
// written as text is shown as it is.
func price(m map[string]any) string {
	n, ok := m["price"].(float64)
	if !ok {
		s, _ := m["price"].(string)
		return strings.TrimSpace(s)
	}
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return ""
	}
	amount := strconv.FormatFloat(math.Abs(n), 'f', 2, 64)
	whole, cents, _ := strings.Cut(amount, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if cents != "00" {
		whole += "." + cents
	}
	if n < 0 {
		whole = "-" + whole
	}
	currency, _ := m["currency"].(string)
	switch strings.ToUpper(strings.TrimSpace(currency)) {
	case "", "USD", "$":
		return "$" + whole
	case "EUR", "€":
		return "€" + whole
	case "GBP", "£":
		return "£" + whole
	}
	return whole + " " + strings.TrimSpace(currency)
}

// The helpers below read the loosely typed values agents send (JSON decoded with or without
// UseNumber, or Go values from built-in agents).

// asBool reads true/false, "yes"/"no", "on"/"off", 1/0.
func asBool(v any) (b, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f != 0, true
		}
	case float64:
		return x != 0, true
	}
	return false, false
}

// asString returns a string value, "" for anything else.
func asString(v any) string {
	s, _ := v.(string)
	return s
}

// asFloat reads a finite number, written as a number or as text; nil when there is none.
func asFloat(v any) *float64 {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = strings.TrimSpace(x)
	case float64:
		return finite(&x)
	default:
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return finite(&f)
}

// asCount reads a non-negative whole number such as a length limit; nil when there is none.
func asCount(v any) *int {
	f := asFloat(v)
	if f == nil || *f < 0 || *f > math.MaxInt32 || *f != math.Trunc(*f) {
		return nil
	}
	n := int(*f)
	return &n
}

// finite returns f unless it is NaN or infinite, which JSON cannot carry.
func finite(f *float64) *float64 {
	if f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) {
		return nil
	}
	return f
}

// cleanDefault keeps the default shapes Field allows: a string, a finite number, a bool,
// or a list of strings.
func cleanDefault(v any) any {
	switch x := v.(type) {
	case string, bool:
		return x
	case []string:
		return slices.Clone(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, item := range x {
			if s, ok := scalarString(item); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if f := asFloat(v); f != nil {
		return *f
	}
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return nil
}

// scalarString formats a string, number or bool as a form value.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x), true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return string(x), true
	case float64:
		if finite(&x) == nil {
			return "", false
		}
		return formatNumber(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// firstScalar returns the first non-empty scalar among the keys of m.
func firstScalar(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := scalarString(m[k]); ok && s != "" {
			return s
		}
	}
	return ""
}

// formatNumber writes a number as people write it: no exponent, no trailing zeros, except
// for very large or very small magnitudes.
func formatNumber(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
