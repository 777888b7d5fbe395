package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// numberPattern is the decimal notation a person types; it keeps out "NaN", "Inf" and hex.
var numberPattern = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)

// FieldErrors maps a field name to the message a person reads next to that field. It is an
// error so that handlers can return it, and a map so that views can place each message.
type FieldErrors map[string]string

// Error lists the messages by field name, for logs.
func (e FieldErrors) Error() string {
	parts := make([]string, 0, len(e))
	for _, name := range slices.Sorted(maps.Keys(e)) {
		parts = append(parts, name+": "+e[name])
	}
	return strings.Join(parts, "; ")
}

// Validate checks a submitted HTML form against q and returns the typed answers: string,
// float64, int64, bool or []string by field kind. Empty optional fields are left out; an
// unchecked optional boolean is false. errs is nil when every field is valid. Fields whose
// kind Parley does not render (see RefuseSecrets) are never read. Date limits given as
// Today are today's date on the server's clock.
func Validate(q Question, form url.Values) (map[string]any, FieldErrors) {
	return ValidateAt(q, form, time.Now())
}

// ValidateAt is Validate on the calendar day of now, for tests that need a fixed today.
func ValidateAt(q Question, form url.Values, now time.Time) (map[string]any, FieldErrors) {
	values := make(map[string]any, len(q.Fields))
	var errs FieldErrors
	for _, f := range q.Fields {
		if !f.Kind.Valid() {
			continue
		}
		v, msg := validateField(f, form[f.Name], now)
		if msg != "" {
			if errs == nil {
				errs = FieldErrors{}
			}
			errs[f.Name] = msg
			continue
		}
		if v != nil {
			values[f.Name] = v
		}
	}
	if errs != nil {
		return nil, errs
	}
	return values, nil
}

// validateField returns the typed value of one field (nil when empty) or the message to show.
func validateField(f Field, raw []string, now time.Time) (any, string) {
	for _, s := range raw {
		if msg := AnswerText.FieldProblem(s); msg != "" {
			return nil, msg
		}
	}
	switch f.Kind {
	case KindBoolean:
		return validateBool(f, raw)
	case KindMultiselect:
		return validateMulti(f, raw)
	}
	s := ""
	if len(raw) > 0 {
		s = strings.TrimSpace(raw[0])
	}
	if s == "" {
		if f.Required {
			return nil, f.Title() + " is required."
		}
		return nil, ""
	}
	switch f.Kind {
	case KindNumber:
		n, err := strconv.ParseFloat(s, 64)
		if !numberPattern.MatchString(s) || err != nil || math.IsInf(n, 0) {
			return nil, "Must be a number."
		}
		return n, rangeMessage(f, n)
	case KindInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, "Must be a whole number."
		}
		return n, rangeMessage(f, float64(n))
	case KindFile:
		return s, ""
	case KindDate:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, "Use the format YYYY-MM-DD."
		}
		return s, dateMessage(f, s, now)
	case KindSelect:
		if !hasOption(f, s) {
			return nil, "Pick one of the options."
		}
		return s, ""
	}
	if msg := textMessage(f, s); msg != "" {
		return nil, msg
	}
	return formatValue(f, s)
}

// formatValue checks a text answer against the field's format and returns it as the format
// writes it: a date and time as RFC 3339 in UTC.
func formatValue(f Field, s string) (any, string) {
	switch f.Format {
	case FormatURI:
		if _, ok := WebURL(s); !ok {
			return nil, "Must be a web address starting with http:// or https://."
		}
	case FormatEmail:
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s {
			return nil, "Must be an email address, such as name@example.com."
		}
	case FormatJSON:
		return jsonValue(f, s)
	case FormatDateTime:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			// What a datetime-local input sends; the field says the time is UTC.
			for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
				if t, err = time.ParseInLocation(layout, s, time.UTC); err == nil {
					break
				}
			}
		}
		if err != nil {
			return nil, "Use a date and time such as 2026-11-24 09:30."
		}
		return t.UTC().Format(time.RFC3339), ""
	}
	return s, ""
}

// rangeMessage checks a number against the field's min and max.
func rangeMessage(f Field, n float64) string {
	low := f.Min != nil && n < *f.Min
	high := f.Max != nil && n > *f.Max
	switch {
	case !low && !high:
		return ""
	case f.Min != nil && f.Max != nil:
		return fmt.Sprintf("Must be between %s and %s.", LimitNumber(*f.Min), LimitNumber(*f.Max))
	case low:
		return "Must be at least " + LimitNumber(*f.Min) + "."
	}
	return "Must be at most " + LimitNumber(*f.Max) + "."
}

// LimitNumber writes a limit as people read it, thousands grouped from 10,000 on.
func LimitNumber(f float64) string {
	s := formatNumber(f)
	if math.Abs(f) < 10000 || strings.ContainsAny(s, "eE") {
		return s
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if frac != "" {
		whole += "." + frac
	}
	return sign + whole
}

// dateMessage checks a date (YYYY-MM-DD, which sorts as text) against the field's limits.
func dateMessage(f Field, s string, now time.Time) string {
	lo, hi := f.DateLimits(now)
	low := lo != "" && s < lo
	high := hi != "" && s > hi
	switch {
	case !low && !high:
		return ""
	case lo != "" && hi != "":
		return fmt.Sprintf("Must be between %s and %s.", dayText(f.MinDate, lo), dayText(f.MaxDate, hi))
	case low:
		return "Must be " + dayText(f.MinDate, lo) + " or later."
	}
	return "Must be " + dayText(f.MaxDate, hi) + " or earlier."
}

// dayText writes a date limit as people read it: "today (23 November 2026)", "1 March 2026".
func dayText(limit, date string) string {
	d, _ := time.Parse(time.DateOnly, date)
	if limit == Today {
		return "today (" + d.Format("2 January 2006") + ")"
	}
	return d.Format("2 January 2006")
}

// textMessage checks a text answer against the field's lengths (in characters) and pattern.
func textMessage(f Field, s string) string {
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return fmt.Sprintf("Must be at least %d %s.", *f.MinLength, plural(*f.MinLength, "character"))
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return fmt.Sprintf("Must be at most %d %s.", *f.MaxLength, plural(*f.MaxLength, "character"))
	}
	if f.Pattern != "" {
		// A pattern that does not compile on its own is the agent's mistake, not the person's: ignore it.
		if _, err := regexp.Compile(f.Pattern); err == nil {
			if re, err := regexp.Compile(`\A(?:` + f.Pattern + `)\z`); err == nil && !re.MatchString(s) {
				return "Does not match the expected format."
			}
		}
	}
	return ""
}

// validateBool reads checkbox semantics (absent is false) and yes/no selects (empty is
// missing, which a required boolean does not accept).
func validateBool(f Field, raw []string) (any, string) {
	answered, bad := false, false
	for _, s := range raw {
		if strings.TrimSpace(s) == "" {
			continue
		}
		b, ok := asBool(s)
		switch {
		case ok && b:
			return true, ""
		case ok:
			answered = true
		default:
			bad = true
		}
	}
	if answered {
		return false, ""
	}
	if bad || f.Required {
		return nil, "Pick yes or no."
	}
	return false, ""
}

// validateMulti checks repeated values against the options and the item limits; the answer
// lists the picked values in the order of the options.
func validateMulti(f Field, raw []string) (any, string) {
	picked := make(map[string]bool, len(raw))
	for _, s := range raw {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !hasOption(f, s) {
			return nil, "Pick only from the options."
		}
		picked[s] = true
	}
	if len(picked) == 0 {
		if f.Required {
			return nil, "Pick at least one."
		}
		return nil, ""
	}
	if f.MinItems != nil && len(picked) < *f.MinItems {
		return nil, fmt.Sprintf("Pick at least %d.", *f.MinItems)
	}
	if f.MaxItems != nil && len(picked) > *f.MaxItems {
		return nil, fmt.Sprintf("Pick at most %d.", *f.MaxItems)
	}
	out := make([]string, 0, len(picked))
	for _, o := range f.Options {
		if picked[o.Value] {
			out = append(out, o.Value)
			delete(picked, o.Value)
		}
	}
	return out, ""
}

func hasOption(f Field, value string) bool {
	return slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == value })
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Check reports what is wrong with a question before it is stored and shown: no fields,
// a missing or repeated name, an unknown kind, a choice without options, limits that no
// answer can meet.
func (q Question) Check() error {
	return q.check(false)
}

// check is Check; secretKinds also accepts the raw password and email kinds the parser keeps.
func (q Question) check(secretKinds bool) error {
	if len(q.Fields) == 0 && len(q.Refused) == 0 && q.Link == "" && q.SubmitLabel == "" {
		return errors.New("question has no fields")
	}
	if q.Link != "" {
		if _, ok := WebURL(q.Link); !ok {
			return fmt.Errorf("the link %q is not an http:// or https:// address", q.Link)
		}
	}
	names := make(map[string]bool, len(q.Fields))
	for i, f := range q.Fields {
		if strings.TrimSpace(f.Name) == "" {
			return fmt.Errorf("field %d has no name", i+1)
		}
		if names[f.Name] {
			return fmt.Errorf("field name %q is used twice", f.Name)
		}
		names[f.Name] = true
		if !f.Kind.Valid() && !(secretKinds && (f.Kind == kindPassword || f.Kind == kindEmail)) {
			return fmt.Errorf("field %q has unknown kind %q", f.Name, f.Kind)
		}
		if err := checkOptions(f); err != nil {
			return err
		}
		if err := checkDates(f); err != nil {
			return err
		}
		if f.Format != "" && !(f.Kind == KindText && (f.Format == FormatURI || f.Format == FormatEmail || f.Format == FormatDateTime) ||
			f.Kind == KindTextarea && f.Format == FormatJSON) {
			return fmt.Errorf("field %q has the format %q: a text field may have uri, email or date-time, a textarea json", f.Name, f.Format)
		}
		if f.Min != nil && f.Max != nil && *f.Min > *f.Max ||
			f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength ||
			f.MinItems != nil && f.MaxItems != nil && *f.MinItems > *f.MaxItems {
			return fmt.Errorf("field %q has a minimum above its maximum", f.Name)
		}
	}
	return nil
}

// checkDates refuses date limits that are neither a date nor Today, and a range no day fits.
func checkDates(f Field) error {
	if f.MinDate == "" && f.MaxDate == "" {
		return nil
	}
	if f.Kind != KindDate {
		return fmt.Errorf("field %q has date limits but is not a date", f.Name)
	}
	for _, limit := range []string{f.MinDate, f.MaxDate} {
		if limit != "" && dateLimit(limit, time.Time{}) == "" {
			return fmt.Errorf("field %q has the date limit %q: use YYYY-MM-DD or %q", f.Name, limit, Today)
		}
	}
	if f.MinDate != Today && f.MaxDate != Today && f.MinDate != "" && f.MaxDate != "" && f.MinDate > f.MaxDate {
		return fmt.Errorf("field %q has a minimum above its maximum", f.Name)
	}
	return nil
}

func checkOptions(f Field) error {
	if f.Kind != KindSelect && f.Kind != KindMultiselect {
		return nil
	}
	if len(f.Options) == 0 {
		return fmt.Errorf("field %q has no options", f.Name)
	}
	values := make(map[string]bool, len(f.Options))
	for _, o := range f.Options {
		if o.Value == "" {
			return fmt.Errorf("field %q has an option without a value", f.Name)
		}
		if values[o.Value] {
			return fmt.Errorf("field %q has option %q twice", f.Name, o.Value)
		}
		values[o.Value] = true
	}
	return nil
}

// FieldDefault returns the field's default as the form values that prefill it: numbers
// without trailing zeros, booleans as "true"/"false", several values only for multiselect.
func FieldDefault(f Field) []string {
	var out []string
	switch v := f.Default.(type) {
	case nil:
		return nil
	case []string:
		out = slices.Clone(v)
	case []any:
		for _, item := range v {
			if s, ok := scalarString(item); ok {
				out = append(out, s)
			}
		}
	default:
		if s, ok := scalarString(v); ok {
			out = []string{s}
		}
	}
	if f.Kind == KindBoolean {
		out = slices.DeleteFunc(out, func(s string) bool { _, ok := asBool(s); return !ok })
		for i, s := range out {
			b, _ := asBool(s)
			out[i] = strconv.FormatBool(b)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if f.Kind != KindMultiselect && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// AnswerForm is a person's answer as it is validated: the form's newlines made LF, and each
// file field holding the name of its file (nothing when no file was given), with those files.
func AnswerForm(q Question, form url.Values, files map[string]File) (url.Values, map[string]File) {
	clean := make(url.Values, len(form))
	for k, vs := range form {
		for _, v := range vs {
			clean[k] = append(clean[k], NormalizeNewlines(v))
		}
	}
	answered := map[string]File{}
	for _, f := range q.Fields {
		if f.Kind != KindFile {
			continue
		}
		clean[f.Name] = nil
		if file, ok := files[f.Name]; ok {
			clean[f.Name] = []string{file.Name}
			answered[f.Name] = file
		}
	}
	return clean, answered
}

// AnswerErrors is every error of an answer some of whose files were refused before it could
// be given (refused holds their messages, by field name): the other fields are checked as
// Runner.Answer checks them, so that one submit shows every error at once.
func AnswerErrors(q Question, form url.Values, files map[string]File, refused FieldErrors) FieldErrors {
	clean, _ := AnswerForm(q, form, files)
	_, errs := Validate(q, clean)
	out := FieldErrors{}
	maps.Copy(out, errs)
	maps.Copy(out, refused)
	return out
}

// jsonValue checks a JSON answer: an object, meeting the field's schema if it has one.
func jsonValue(f Field, s string) (any, string) {
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil || v == nil {
		return nil, "Must be a JSON object, such as {\"name\": \"value\"}."
	}
	if len(f.Schema) == 0 {
		return s, ""
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(f.Schema, &schema); err != nil {
		return s, "" // a schema that cannot be read is the agent's mistake, not the person's
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return s, ""
	}
	if err := rs.Validate(v); err != nil {
		return nil, "Does not fit what the tool accepts: " + err.Error()
	}
	return s, ""
}
