package agent_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/agent"
)

func TestValidate(t *testing.T) {
	abc := []agent.Option{{Value: "a"}, {Value: "b", Label: "Bee"}, {Value: "c"}}
	tests := []struct {
		name    string
		field   agent.Field
		form    url.Values
		want    any    // the typed value; nil when left out
		wantErr string // the message for the field
	}{
		{"TextTrimmed", agent.Field{Name: "t", Kind: agent.KindText}, url.Values{"t": {"  hi  "}}, "hi", ""},
		{"TextRequired", agent.Field{Name: "branch_name", Kind: agent.KindText, Required: true}, url.Values{"branch_name": {"  "}}, nil, "Branch name is required."},
		{"TextRequiredLabel", agent.Field{Name: "b", Label: "Branch", Kind: agent.KindText, Required: true}, nil, nil, "Branch is required."},
		{"TextOptionalEmpty", agent.Field{Name: "t", Kind: agent.KindText}, url.Values{"t": {""}}, nil, ""},
		{"TextOptionalAbsent", agent.Field{Name: "t", Kind: agent.KindTextarea}, nil, nil, ""},
		{"TextMinLength", agent.Field{Name: "t", Kind: agent.KindText, MinLength: new(3)}, url.Values{"t": {"ab"}}, nil, "Must be at least 3 characters."},
		{"TextMinLengthOne", agent.Field{Name: "t", Kind: agent.KindText, MinLength: new(1), Required: true}, url.Values{"t": {"x"}}, "x", ""},
		{"TextMinLengthRunes", agent.Field{Name: "t", Kind: agent.KindText, MinLength: new(3)}, url.Values{"t": {"äöü"}}, "äöü", ""},
		{"TextMaxLength", agent.Field{Name: "t", Kind: agent.KindTextarea, MaxLength: new(1)}, url.Values{"t": {"ab"}}, nil, "Must be at most 1 character."},
		{"TextMaxLengthRunes", agent.Field{Name: "t", Kind: agent.KindText, MaxLength: new(2)}, url.Values{"t": {"日本"}}, "日本", ""},
		{"PatternMatch", agent.Field{Name: "t", Kind: agent.KindText, Pattern: `[a-z]+-\d+`}, url.Values{"t": {"abc-12"}}, "abc-12", ""},
		{"PatternIsFullMatch", agent.Field{Name: "t", Kind: agent.KindText, Pattern: `[a-z]+`}, url.Values{"t": {"abc1"}}, nil, "Does not match the expected format."},
		{"PatternAlternationIsFullMatch", agent.Field{Name: "t", Kind: agent.KindText, Pattern: `a|b`}, url.Values{"t": {"ab"}}, nil, "Does not match the expected format."},
		{"PatternInvalidIgnored", agent.Field{Name: "t", Kind: agent.KindText, Pattern: `(?<=x)[`}, url.Values{"t": {"anything"}}, "anything", ""},
		{"PatternUnbalancedIgnored", agent.Field{Name: "t", Kind: agent.KindText, Pattern: `a)|(b`}, url.Values{"t": {"zzz"}}, "zzz", ""},
		{"InvalidUTF8", agent.Field{Name: "t", Kind: agent.KindText}, url.Values{"t": {"a\xffb"}}, nil, "Contains bytes that are not text (invalid UTF-8) at character 2."},
		{"NUL", agent.Field{Name: "t", Kind: agent.KindText}, url.Values{"t": {"a\x00b"}}, nil, "Contains a control character (U+0000) at character 2: remove it."},
		{"Escape", agent.Field{Name: "t", Kind: agent.KindTextarea}, url.Values{"t": {"red \x1b[31m"}}, nil, "Contains a control character (U+001B) at character 5: remove it."},
		{"TabsAndNewlines", agent.Field{Name: "t", Kind: agent.KindTextarea}, url.Values{"t": {"a\tb\r\nc"}}, "a\tb\r\nc", ""},
		{"Huge", agent.Field{Name: "t", Kind: agent.KindTextarea}, url.Values{"t": {strings.Repeat("x", 1<<20)}}, nil, "Must be at most 20,000 characters (this has 1,048,576)."},
		{"HugeIgnoredFieldNotRead", agent.Field{Name: "t", Kind: agent.KindText}, url.Values{"other": {strings.Repeat("x", 1<<20)}}, nil, ""},

		{"Number", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {" 2.5 "}}, 2.5, ""},
		{"NumberExponent", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"-1e3"}}, -1000.0, ""},
		{"NumberNotANumber", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"12 apples"}}, nil, "Must be a number."},
		{"NumberNaN", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"NaN"}}, nil, "Must be a number."},
		{"NumberInf", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"+Inf"}}, nil, "Must be a number."},
		{"NumberOverflow", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"1e400"}}, nil, "Must be a number."},
		{"NumberHex", agent.Field{Name: "n", Kind: agent.KindNumber}, url.Values{"n": {"0x10"}}, nil, "Must be a number."},
		{"NumberRequired", agent.Field{Name: "budget", Kind: agent.KindNumber, Required: true}, nil, nil, "Budget is required."},
		{"NumberBetweenLow", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(10.0), Max: new(100.0)}, url.Values{"n": {"9.99"}}, nil, "Must be between 10 and 100."},
		{"NumberBetweenHigh", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(0.5), Max: new(2.0)}, url.Values{"n": {"3"}}, nil, "Must be between 0.5 and 2."},
		{"NumberBetweenEdge", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(10.0), Max: new(100.0)}, url.Values{"n": {"100"}}, 100.0, ""},
		{"NumberMin", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(0.0)}, url.Values{"n": {"-1"}}, nil, "Must be at least 0."},
		{"NumberMax", agent.Field{Name: "n", Kind: agent.KindNumber, Max: new(5.0)}, url.Values{"n": {"6"}}, nil, "Must be at most 5."},
		{"NumberLargeLimits", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(2500.0), Max: new(10000000.5)}, url.Values{"n": {"300"}}, nil, "Must be between 2500 and 10,000,000.5."},
		{"NumberLargeNegative", agent.Field{Name: "n", Kind: agent.KindNumber, Min: new(-12000.0)}, url.Values{"n": {"-12001"}}, nil, "Must be at least -12,000."},

		{"Integer", agent.Field{Name: "i", Kind: agent.KindInteger}, url.Values{"i": {"42"}}, int64(42), ""},
		{"IntegerNegative", agent.Field{Name: "i", Kind: agent.KindInteger}, url.Values{"i": {"-7"}}, int64(-7), ""},
		{"IntegerFraction", agent.Field{Name: "i", Kind: agent.KindInteger}, url.Values{"i": {"4.5"}}, nil, "Must be a whole number."},
		{"IntegerOverflow", agent.Field{Name: "i", Kind: agent.KindInteger}, url.Values{"i": {"99999999999999999999"}}, nil, "Must be a whole number."},
		{"IntegerUnderscore", agent.Field{Name: "i", Kind: agent.KindInteger}, url.Values{"i": {"1_000"}}, nil, "Must be a whole number."},
		{"IntegerRange", agent.Field{Name: "i", Kind: agent.KindInteger, Min: new(1.0), Max: new(10.0)}, url.Values{"i": {"11"}}, nil, "Must be between 1 and 10."},

		{"Date", agent.Field{Name: "d", Kind: agent.KindDate}, url.Values{"d": {"2026-02-28"}}, "2026-02-28", ""},
		{"DateImpossible", agent.Field{Name: "d", Kind: agent.KindDate}, url.Values{"d": {"2026-02-30"}}, nil, "Use the format YYYY-MM-DD."},
		{"DateWrongFormat", agent.Field{Name: "d", Kind: agent.KindDate}, url.Values{"d": {"28/02/2026"}}, nil, "Use the format YYYY-MM-DD."},
		{"DateRequired", agent.Field{Name: "start_date", Kind: agent.KindDate, Required: true}, nil, nil, "Start date is required."},
		{"DateBeforeMin", agent.Field{Name: "d", Kind: agent.KindDate, MinDate: "2026-03-01"}, url.Values{"d": {"2026-02-28"}}, nil, "Must be 1 March 2026 or later."},
		{"DateMinEdge", agent.Field{Name: "d", Kind: agent.KindDate, MinDate: "2026-03-01"}, url.Values{"d": {"2026-03-01"}}, "2026-03-01", ""},
		{"DateAfterMax", agent.Field{Name: "d", Kind: agent.KindDate, MaxDate: "2026-03-31"}, url.Values{"d": {"2026-04-01"}}, nil, "Must be 31 March 2026 or earlier."},
		{"DateOutsideRange", agent.Field{Name: "d", Kind: agent.KindDate, MinDate: "2026-03-01", MaxDate: "2026-03-31"}, url.Values{"d": {"2027-03-15"}}, nil, "Must be between 1 March 2026 and 31 March 2026."},
		{"DateBadLimitIgnored", agent.Field{Name: "d", Kind: agent.KindDate, MinDate: "soon"}, url.Values{"d": {"2000-01-01"}}, "2000-01-01", ""},

		{"Select", agent.Field{Name: "s", Kind: agent.KindSelect, Options: abc}, url.Values{"s": {"b"}}, "b", ""},
		{"SelectLabelIsNotAValue", agent.Field{Name: "s", Kind: agent.KindSelect, Options: abc}, url.Values{"s": {"Bee"}}, nil, "Pick one of the options."},
		{"SelectUnknown", agent.Field{Name: "s", Kind: agent.KindSelect, Options: abc}, url.Values{"s": {"z"}}, nil, "Pick one of the options."},
		{"SelectRequired", agent.Field{Name: "s", Label: "Venue", Kind: agent.KindSelect, Options: abc, Required: true}, url.Values{"s": {""}}, nil, "Venue is required."},

		{"Multi", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc}, url.Values{"m": {"c", "a", "c"}}, []string{"a", "c"}, ""},
		{"MultiUnknown", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc}, url.Values{"m": {"a", "z"}}, nil, "Pick only from the options."},
		{"MultiRequired", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc, Required: true}, nil, nil, "Pick at least one."},
		{"MultiOptionalEmpty", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc, MinItems: new(2)}, url.Values{"m": {""}}, nil, ""},
		{"MultiMinItems", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc, MinItems: new(2)}, url.Values{"m": {"a"}}, nil, "Pick at least 2."},
		{"MultiMaxItems", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc, MaxItems: new(2)}, url.Values{"m": {"a", "b", "c"}}, nil, "Pick at most 2."},
		{"MultiRepeatsCountOnce", agent.Field{Name: "m", Kind: agent.KindMultiselect, Options: abc, MaxItems: new(1)}, url.Values{"m": {"a", "a", "a"}}, []string{"a"}, ""},

		{"BoolCheckboxOn", agent.Field{Name: "b", Kind: agent.KindBoolean}, url.Values{"b": {"on"}}, true, ""},
		{"BoolCheckboxAbsent", agent.Field{Name: "b", Kind: agent.KindBoolean}, nil, false, ""},
		{"BoolHiddenThenChecked", agent.Field{Name: "b", Kind: agent.KindBoolean}, url.Values{"b": {"false", "true"}}, true, ""},
		{"BoolYes", agent.Field{Name: "b", Kind: agent.KindBoolean}, url.Values{"b": {"Yes"}}, true, ""},
		{"BoolOne", agent.Field{Name: "b", Kind: agent.KindBoolean}, url.Values{"b": {"1"}}, true, ""},
		{"BoolGarbage", agent.Field{Name: "b", Kind: agent.KindBoolean}, url.Values{"b": {"maybe"}}, nil, "Pick yes or no."},
		{"BoolRequiredTrue", agent.Field{Name: "b", Kind: agent.KindBoolean, Required: true}, url.Values{"b": {"true"}}, true, ""},
		{"BoolRequiredFalse", agent.Field{Name: "b", Kind: agent.KindBoolean, Required: true}, url.Values{"b": {"false"}}, false, ""},
		{"BoolRequiredEmpty", agent.Field{Name: "b", Kind: agent.KindBoolean, Required: true}, url.Values{"b": {""}}, nil, "Pick yes or no."},
		{"BoolRequiredAbsent", agent.Field{Name: "b", Kind: agent.KindBoolean, Required: true}, nil, nil, "Pick yes or no."},

		{"RawKindNeverRead", agent.Field{Name: "p", Kind: "password", Required: true}, url.Values{"p": {"hunter2"}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := agent.Validate(agent.Question{Fields: []agent.Field{tt.field}}, tt.form)
			if errs[tt.field.Name] != tt.wantErr {
				t.Fatalf("got error %q, want %q", errs[tt.field.Name], tt.wantErr)
			}
			if tt.wantErr != "" {
				if got != nil {
					t.Errorf("got values %#v with errors, want nil", got)
				}
				return
			}
			if errs != nil {
				t.Errorf("got errors %#v, want nil", errs)
			}
			v, present := got[tt.field.Name]
			if present != (tt.want != nil) || !reflect.DeepEqual(v, tt.want) {
				t.Errorf("got %#v (present %v), want %#v", v, present, tt.want)
			}
		})
	}
}

// A date field whose MinDate is Today refuses the past, with a message that says the limit,
// and takes today and later: the day is the server's, when the form is answered.
func TestValidate_DateFromToday(t *testing.T) {
	q := agent.Question{Fields: []agent.Field{
		{Name: "date", Label: "Date", Kind: agent.KindDate, Required: true, MinDate: agent.Today},
		{Name: "note", Kind: agent.KindText},
	}}
	now := time.Date(2026, 11, 23, 22, 30, 0, 0, time.UTC)
	tests := []struct {
		date, wantErr string
	}{
		{"2026-11-22", "Must be today (23 November 2026) or later."},
		{"2020-01-01", "Must be today (23 November 2026) or later."},
		{"2026-11-23", ""},
		{"2026-11-24", ""},
	}
	for _, tt := range tests {
		values, errs := agent.ValidateAt(q, url.Values{"date": {tt.date}, "note": {"n"}}, now)
		if errs["date"] != tt.wantErr {
			t.Errorf("%s: got error %q, want %q", tt.date, errs["date"], tt.wantErr)
		}
		if tt.wantErr == "" && values["date"] != tt.date {
			t.Errorf("%s: got values %v", tt.date, values)
		}
	}
	// Validate reads the server's clock: today passes, yesterday does not.
	today := time.Now()
	if _, errs := agent.Validate(q, url.Values{"date": {today.Format(time.DateOnly)}}); errs != nil {
		t.Errorf("today refused: %v", errs)
	}
	yesterday := today.AddDate(0, 0, -1).Format(time.DateOnly)
	if _, errs := agent.Validate(q, url.Values{"date": {yesterday}}); !strings.HasPrefix(errs["date"], "Must be today (") {
		t.Errorf("yesterday: got %v, want the date refused", errs)
	}
	lo, hi := q.Fields[0].DateLimits(now)
	if lo != "2026-11-23" || hi != "" {
		t.Errorf("DateLimits = %q, %q; want 2026-11-23 and none", lo, hi)
	}
}

func TestValidate_WholeForm(t *testing.T) {
	q := agent.Question{Fields: []agent.Field{
		{Name: "title", Kind: agent.KindText, Required: true},
		{Name: "count", Kind: agent.KindInteger, Required: true},
		{Name: "note", Kind: agent.KindText},
	}}
	_, errs := agent.Validate(q, url.Values{"count": {"x"}, "unexpected": {"y"}})
	want := agent.FieldErrors{"title": "Title is required.", "count": "Must be a whole number."}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("got %#v, want %#v", errs, want)
	}
	if got, want := errs.Error(), "count: Must be a whole number.; title: Title is required."; got != want {
		t.Errorf("got Error() %q, want %q", got, want)
	}
	values, errs := agent.Validate(q, url.Values{"title": {"T"}, "count": {"3"}})
	if errs != nil || !reflect.DeepEqual(values, map[string]any{"title": "T", "count": int64(3)}) {
		t.Errorf("got %#v, %#v; want title and count only", values, errs)
	}
}

func TestQuestion_Check(t *testing.T) {
	opts := []agent.Option{{Value: "a"}, {Value: "b"}}
	tests := []struct {
		name    string
		q       agent.Question
		wantErr string // a part of the message, "" for valid
	}{
		{"Valid", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindText}, {Name: "b", Kind: agent.KindSelect, Options: opts}}}, ""},
		{"OnlyRefused", agent.Question{Fields: []agent.Field{}, Refused: []agent.RefusedField{{Name: "p", Reason: "r"}}}, ""},
		{"NoFields", agent.Question{Message: "hi"}, "no fields"},
		{"NoName", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindText}, {Name: " ", Kind: agent.KindText}}}, "field 2 has no name"},
		{"DuplicateName", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindText}, {Name: "a", Kind: agent.KindDate}}}, `"a" is used twice`},
		{"UnknownKind", agent.Question{Fields: []agent.Field{{Name: "a", Kind: "color"}}}, `unknown kind "color"`},
		{"EmptyKind", agent.Question{Fields: []agent.Field{{Name: "a"}}}, "unknown kind"},
		{"PasswordKind", agent.Question{Fields: []agent.Field{{Name: "a", Kind: "password"}}}, "unknown kind"},
		{"SelectNoOptions", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindSelect}}}, "no options"},
		{"MultiNoOptions", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindMultiselect}}}, "no options"},
		{"EmptyOptionValue", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindSelect, Options: []agent.Option{{Label: "A"}}}}}, "option without a value"},
		{"DuplicateOption", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindSelect, Options: []agent.Option{{Value: "x"}, {Value: "x", Label: "X"}}}}}, `option "x" twice`},
		{"MinAboveMax", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindNumber, Min: new(2.0), Max: new(1.0)}}}, "minimum above its maximum"},
		{"MinLengthAboveMax", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindText, MinLength: new(2), MaxLength: new(1)}}}, "minimum above its maximum"},
		{"MinItemsAboveMax", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindMultiselect, Options: opts, MinItems: new(2), MaxItems: new(1)}}}, "minimum above its maximum"},
		{"DateFromToday", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindDate, MinDate: agent.Today, MaxDate: "2099-12-31"}}}, ""},
		{"DateLimitNotADate", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindDate, MinDate: "next week"}}}, `date limit "next week"`},
		{"DateMinAboveMax", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindDate, MinDate: "2026-03-02", MaxDate: "2026-03-01"}}}, "minimum above its maximum"},
		{"DateLimitsOnText", agent.Question{Fields: []agent.Field{{Name: "a", Kind: agent.KindText, MinDate: agent.Today}}}, "not a date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.q.Check()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestFieldDefault(t *testing.T) {
	tests := []struct {
		name  string
		field agent.Field
		want  []string
	}{
		{"None", agent.Field{Kind: agent.KindText}, nil},
		{"String", agent.Field{Kind: agent.KindText, Default: "main"}, []string{"main"}},
		{"WholeFloat", agent.Field{Kind: agent.KindNumber, Default: 3.0}, []string{"3"}},
		{"Fraction", agent.Field{Kind: agent.KindNumber, Default: 2.50}, []string{"2.5"}},
		{"Large", agent.Field{Kind: agent.KindNumber, Default: 1234567.0}, []string{"1234567"}},
		{"Int", agent.Field{Kind: agent.KindInteger, Default: 7}, []string{"7"}},
		{"NaN", agent.Field{Kind: agent.KindNumber, Default: nanValue()}, nil},
		{"BoolTrue", agent.Field{Kind: agent.KindBoolean, Default: true}, []string{"true"}},
		{"BoolFalse", agent.Field{Kind: agent.KindBoolean, Default: false}, []string{"false"}},
		{"BoolFromText", agent.Field{Kind: agent.KindBoolean, Default: "yes"}, []string{"true"}},
		{"BoolGarbage", agent.Field{Kind: agent.KindBoolean, Default: "maybe"}, nil},
		{"MultiStrings", agent.Field{Kind: agent.KindMultiselect, Default: []string{"a", "b"}}, []string{"a", "b"}},
		{"MultiAny", agent.Field{Kind: agent.KindMultiselect, Default: []any{"a", 2.0, map[string]any{}}}, []string{"a", "2"}},
		{"ListForSingle", agent.Field{Kind: agent.KindSelect, Default: []any{"a", "b"}}, []string{"a"}},
		{"Object", agent.Field{Kind: agent.KindText, Default: map[string]any{"a": 1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.FieldDefault(tt.field); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// nanValue is NaN, built at run time since constants cannot be NaN.
func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// AnswerErrors puts the refusal of a file next to its field together with every other
// field's error, checked as an answer is: CRLF counts as one character.
func TestAnswerErrors(t *testing.T) {
	q := agent.Question{Fields: []agent.Field{
		{Name: "config", Label: "Config", Kind: agent.KindFile, Required: true},
		{Name: "log", Label: "Log", Kind: agent.KindFile, Required: true},
		{Name: "count", Label: "Count", Kind: agent.KindInteger, Required: true, Min: new(1.0)},
		{Name: "title", Label: "Title", Kind: agent.KindText, Required: true},
		{Name: "note", Kind: agent.KindTextarea, MaxLength: new(3)},
	}}
	files := map[string]agent.File{"log": {Name: "app.log", MimeType: "text/x-log", Content: []byte("ok")}}
	refused := agent.FieldErrors{"config": "x.bin cannot be attached: it is binary data."}
	got := agent.AnswerErrors(q, url.Values{"count": {"0"}, "note": {"a\r\nb"}, "config": {"ignored"}}, files, refused)
	want := agent.FieldErrors{
		"config": "x.bin cannot be attached: it is binary data.",
		"count":  "Must be at least 1.",
		"title":  "Title is required.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
