package domain_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestValidate(t *testing.T) {
	abc := []domain.Option{{Value: "a"}, {Value: "b", Label: "Bee"}, {Value: "c"}}
	tests := []struct {
		name    string
		field   domain.Field
		form    url.Values
		want    any    // the typed value; nil when left out
		wantErr string // the message for the field
	}{
		{"TextTrimmed", domain.Field{Name: "t", Kind: domain.KindText}, url.Values{"t": {"  hi  "}}, "hi", ""},
		{"TextRequired", domain.Field{Name: "branch_name", Kind: domain.KindText, Required: true}, url.Values{"branch_name": {"  "}}, nil, "Branch name is required."},
		{"TextRequiredLabel", domain.Field{Name: "b", Label: "Branch", Kind: domain.KindText, Required: true}, nil, nil, "Branch is required."},
		{"TextOptionalEmpty", domain.Field{Name: "t", Kind: domain.KindText}, url.Values{"t": {""}}, nil, ""},
		{"TextOptionalAbsent", domain.Field{Name: "t", Kind: domain.KindTextarea}, nil, nil, ""},
		{"TextMinLength", domain.Field{Name: "t", Kind: domain.KindText, MinLength: new(3)}, url.Values{"t": {"ab"}}, nil, "Must be at least 3 characters."},
		{"TextMinLengthOne", domain.Field{Name: "t", Kind: domain.KindText, MinLength: new(1), Required: true}, url.Values{"t": {"x"}}, "x", ""},
		{"TextMinLengthRunes", domain.Field{Name: "t", Kind: domain.KindText, MinLength: new(3)}, url.Values{"t": {"äöü"}}, "äöü", ""},
		{"TextMaxLength", domain.Field{Name: "t", Kind: domain.KindTextarea, MaxLength: new(1)}, url.Values{"t": {"ab"}}, nil, "Must be at most 1 character."},
		{"TextMaxLengthRunes", domain.Field{Name: "t", Kind: domain.KindText, MaxLength: new(2)}, url.Values{"t": {"日本"}}, "日本", ""},
		{"PatternMatch", domain.Field{Name: "t", Kind: domain.KindText, Pattern: `[a-z]+-\d+`}, url.Values{"t": {"abc-12"}}, "abc-12", ""},
		{"PatternIsFullMatch", domain.Field{Name: "t", Kind: domain.KindText, Pattern: `[a-z]+`}, url.Values{"t": {"abc1"}}, nil, "Does not match the expected format."},
		{"PatternAlternationIsFullMatch", domain.Field{Name: "t", Kind: domain.KindText, Pattern: `a|b`}, url.Values{"t": {"ab"}}, nil, "Does not match the expected format."},
		{"PatternInvalidIgnored", domain.Field{Name: "t", Kind: domain.KindText, Pattern: `(?<=x)[`}, url.Values{"t": {"anything"}}, "anything", ""},
		{"PatternUnbalancedIgnored", domain.Field{Name: "t", Kind: domain.KindText, Pattern: `a)|(b`}, url.Values{"t": {"zzz"}}, "zzz", ""},
		{"InvalidUTF8", domain.Field{Name: "t", Kind: domain.KindText}, url.Values{"t": {"a\xffb"}}, nil, "Contains bytes that are not text (invalid UTF-8) at character 2."},
		{"NUL", domain.Field{Name: "t", Kind: domain.KindText}, url.Values{"t": {"a\x00b"}}, nil, "Contains a control character (U+0000) at character 2: remove it."},
		{"Escape", domain.Field{Name: "t", Kind: domain.KindTextarea}, url.Values{"t": {"red \x1b[31m"}}, nil, "Contains a control character (U+001B) at character 5: remove it."},
		{"TabsAndNewlines", domain.Field{Name: "t", Kind: domain.KindTextarea}, url.Values{"t": {"a\tb\r\nc"}}, "a\tb\r\nc", ""},
		{"Huge", domain.Field{Name: "t", Kind: domain.KindTextarea}, url.Values{"t": {strings.Repeat("x", 1<<20)}}, nil, "Must be at most 20,000 characters (this has 1,048,576)."},
		{"HugeIgnoredFieldNotRead", domain.Field{Name: "t", Kind: domain.KindText}, url.Values{"other": {strings.Repeat("x", 1<<20)}}, nil, ""},

		{"Number", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {" 2.5 "}}, 2.5, ""},
		{"NumberExponent", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"-1e3"}}, -1000.0, ""},
		{"NumberNotANumber", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"12 apples"}}, nil, "Must be a number."},
		{"NumberNaN", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"NaN"}}, nil, "Must be a number."},
		{"NumberInf", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"+Inf"}}, nil, "Must be a number."},
		{"NumberOverflow", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"1e400"}}, nil, "Must be a number."},
		{"NumberHex", domain.Field{Name: "n", Kind: domain.KindNumber}, url.Values{"n": {"0x10"}}, nil, "Must be a number."},
		{"NumberRequired", domain.Field{Name: "budget", Kind: domain.KindNumber, Required: true}, nil, nil, "Budget is required."},
		{"NumberBetweenLow", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(10.0), Max: new(100.0)}, url.Values{"n": {"9.99"}}, nil, "Must be between 10 and 100."},
		{"NumberBetweenHigh", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(0.5), Max: new(2.0)}, url.Values{"n": {"3"}}, nil, "Must be between 0.5 and 2."},
		{"NumberBetweenEdge", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(10.0), Max: new(100.0)}, url.Values{"n": {"100"}}, 100.0, ""},
		{"NumberMin", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(0.0)}, url.Values{"n": {"-1"}}, nil, "Must be at least 0."},
		{"NumberMax", domain.Field{Name: "n", Kind: domain.KindNumber, Max: new(5.0)}, url.Values{"n": {"6"}}, nil, "Must be at most 5."},
		{"NumberLargeLimits", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(2500.0), Max: new(10000000.5)}, url.Values{"n": {"300"}}, nil, "Must be between 2500 and 10,000,000.5."},
		{"NumberLargeNegative", domain.Field{Name: "n", Kind: domain.KindNumber, Min: new(-12000.0)}, url.Values{"n": {"-12001"}}, nil, "Must be at least -12,000."},

		{"Integer", domain.Field{Name: "i", Kind: domain.KindInteger}, url.Values{"i": {"42"}}, int64(42), ""},
		{"IntegerNegative", domain.Field{Name: "i", Kind: domain.KindInteger}, url.Values{"i": {"-7"}}, int64(-7), ""},
		{"IntegerFraction", domain.Field{Name: "i", Kind: domain.KindInteger}, url.Values{"i": {"4.5"}}, nil, "Must be a whole number."},
		{"IntegerOverflow", domain.Field{Name: "i", Kind: domain.KindInteger}, url.Values{"i": {"99999999999999999999"}}, nil, "Must be a whole number."},
		{"IntegerUnderscore", domain.Field{Name: "i", Kind: domain.KindInteger}, url.Values{"i": {"1_000"}}, nil, "Must be a whole number."},
		{"IntegerRange", domain.Field{Name: "i", Kind: domain.KindInteger, Min: new(1.0), Max: new(10.0)}, url.Values{"i": {"11"}}, nil, "Must be between 1 and 10."},

		{"Date", domain.Field{Name: "d", Kind: domain.KindDate}, url.Values{"d": {"2026-02-28"}}, "2026-02-28", ""},
		{"DateImpossible", domain.Field{Name: "d", Kind: domain.KindDate}, url.Values{"d": {"2026-02-30"}}, nil, "Use the format YYYY-MM-DD."},
		{"DateWrongFormat", domain.Field{Name: "d", Kind: domain.KindDate}, url.Values{"d": {"28/02/2026"}}, nil, "Use the format YYYY-MM-DD."},
		{"DateRequired", domain.Field{Name: "start_date", Kind: domain.KindDate, Required: true}, nil, nil, "Start date is required."},
		{"DateBeforeMin", domain.Field{Name: "d", Kind: domain.KindDate, MinDate: "2026-03-01"}, url.Values{"d": {"2026-02-28"}}, nil, "Must be 1 March 2026 or later."},
		{"DateMinEdge", domain.Field{Name: "d", Kind: domain.KindDate, MinDate: "2026-03-01"}, url.Values{"d": {"2026-03-01"}}, "2026-03-01", ""},
		{"DateAfterMax", domain.Field{Name: "d", Kind: domain.KindDate, MaxDate: "2026-03-31"}, url.Values{"d": {"2026-04-01"}}, nil, "Must be 31 March 2026 or earlier."},
		{"DateOutsideRange", domain.Field{Name: "d", Kind: domain.KindDate, MinDate: "2026-03-01", MaxDate: "2026-03-31"}, url.Values{"d": {"2027-03-15"}}, nil, "Must be between 1 March 2026 and 31 March 2026."},
		{"DateBadLimitIgnored", domain.Field{Name: "d", Kind: domain.KindDate, MinDate: "soon"}, url.Values{"d": {"2000-01-01"}}, "2000-01-01", ""},

		{"Select", domain.Field{Name: "s", Kind: domain.KindSelect, Options: abc}, url.Values{"s": {"b"}}, "b", ""},
		{"SelectLabelIsNotAValue", domain.Field{Name: "s", Kind: domain.KindSelect, Options: abc}, url.Values{"s": {"Bee"}}, nil, "Pick one of the options."},
		{"SelectUnknown", domain.Field{Name: "s", Kind: domain.KindSelect, Options: abc}, url.Values{"s": {"z"}}, nil, "Pick one of the options."},
		{"SelectRequired", domain.Field{Name: "s", Label: "Venue", Kind: domain.KindSelect, Options: abc, Required: true}, url.Values{"s": {""}}, nil, "Venue is required."},

		{"Multi", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc}, url.Values{"m": {"c", "a", "c"}}, []string{"a", "c"}, ""},
		{"MultiUnknown", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc}, url.Values{"m": {"a", "z"}}, nil, "Pick only from the options."},
		{"MultiRequired", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc, Required: true}, nil, nil, "Pick at least one."},
		{"MultiOptionalEmpty", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc, MinItems: new(2)}, url.Values{"m": {""}}, nil, ""},
		{"MultiMinItems", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc, MinItems: new(2)}, url.Values{"m": {"a"}}, nil, "Pick at least 2."},
		{"MultiMaxItems", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc, MaxItems: new(2)}, url.Values{"m": {"a", "b", "c"}}, nil, "Pick at most 2."},
		{"MultiRepeatsCountOnce", domain.Field{Name: "m", Kind: domain.KindMultiselect, Options: abc, MaxItems: new(1)}, url.Values{"m": {"a", "a", "a"}}, []string{"a"}, ""},

		{"BoolCheckboxOn", domain.Field{Name: "b", Kind: domain.KindBoolean}, url.Values{"b": {"on"}}, true, ""},
		{"BoolCheckboxAbsent", domain.Field{Name: "b", Kind: domain.KindBoolean}, nil, false, ""},
		{"BoolHiddenThenChecked", domain.Field{Name: "b", Kind: domain.KindBoolean}, url.Values{"b": {"false", "true"}}, true, ""},
		{"BoolYes", domain.Field{Name: "b", Kind: domain.KindBoolean}, url.Values{"b": {"Yes"}}, true, ""},
		{"BoolOne", domain.Field{Name: "b", Kind: domain.KindBoolean}, url.Values{"b": {"1"}}, true, ""},
		{"BoolGarbage", domain.Field{Name: "b", Kind: domain.KindBoolean}, url.Values{"b": {"maybe"}}, nil, "Pick yes or no."},
		{"BoolRequiredTrue", domain.Field{Name: "b", Kind: domain.KindBoolean, Required: true}, url.Values{"b": {"true"}}, true, ""},
		{"BoolRequiredFalse", domain.Field{Name: "b", Kind: domain.KindBoolean, Required: true}, url.Values{"b": {"false"}}, false, ""},
		{"BoolRequiredEmpty", domain.Field{Name: "b", Kind: domain.KindBoolean, Required: true}, url.Values{"b": {""}}, nil, "Pick yes or no."},
		{"BoolRequiredAbsent", domain.Field{Name: "b", Kind: domain.KindBoolean, Required: true}, nil, nil, "Pick yes or no."},

		{"RawKindNeverRead", domain.Field{Name: "p", Kind: "password", Required: true}, url.Values{"p": {"hunter2"}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := domain.Validate(domain.Question{Fields: []domain.Field{tt.field}}, tt.form)
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
	q := domain.Question{Fields: []domain.Field{
		{Name: "date", Label: "Date", Kind: domain.KindDate, Required: true, MinDate: domain.Today},
		{Name: "note", Kind: domain.KindText},
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
		values, errs := domain.ValidateAt(q, url.Values{"date": {tt.date}, "note": {"n"}}, now)
		if errs["date"] != tt.wantErr {
			t.Errorf("%s: got error %q, want %q", tt.date, errs["date"], tt.wantErr)
		}
		if tt.wantErr == "" && values["date"] != tt.date {
			t.Errorf("%s: got values %v", tt.date, values)
		}
	}
	// Validate reads the server's clock: today passes, yesterday does not.
	today := time.Now()
	if _, errs := domain.Validate(q, url.Values{"date": {today.Format(time.DateOnly)}}); errs != nil {
		t.Errorf("today refused: %v", errs)
	}
	yesterday := today.AddDate(0, 0, -1).Format(time.DateOnly)
	if _, errs := domain.Validate(q, url.Values{"date": {yesterday}}); !strings.HasPrefix(errs["date"], "Must be today (") {
		t.Errorf("yesterday: got %v, want the date refused", errs)
	}
	lo, hi := q.Fields[0].DateLimits(now)
	if lo != "2026-11-23" || hi != "" {
		t.Errorf("DateLimits = %q, %q; want 2026-11-23 and none", lo, hi)
	}
}

func TestValidate_WholeForm(t *testing.T) {
	q := domain.Question{Fields: []domain.Field{
		{Name: "title", Kind: domain.KindText, Required: true},
		{Name: "count", Kind: domain.KindInteger, Required: true},
		{Name: "note", Kind: domain.KindText},
	}}
	_, errs := domain.Validate(q, url.Values{"count": {"x"}, "unexpected": {"y"}})
	want := domain.FieldErrors{"title": "Title is required.", "count": "Must be a whole number."}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("got %#v, want %#v", errs, want)
	}
	if got, want := errs.Error(), "count: Must be a whole number.; title: Title is required."; got != want {
		t.Errorf("got Error() %q, want %q", got, want)
	}
	values, errs := domain.Validate(q, url.Values{"title": {"T"}, "count": {"3"}})
	if errs != nil || !reflect.DeepEqual(values, map[string]any{"title": "T", "count": int64(3)}) {
		t.Errorf("got %#v, %#v; want title and count only", values, errs)
	}
}

func TestQuestion_Check(t *testing.T) {
	opts := []domain.Option{{Value: "a"}, {Value: "b"}}
	tests := []struct {
		name    string
		q       domain.Question
		wantErr string // a part of the message, "" for valid
	}{
		{"Valid", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindText}, {Name: "b", Kind: domain.KindSelect, Options: opts}}}, ""},
		{"OnlyRefused", domain.Question{Fields: []domain.Field{}, Refused: []domain.RefusedField{{Name: "p", Reason: "r"}}}, ""},
		{"NoFields", domain.Question{Message: "hi"}, "no fields"},
		{"NoName", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindText}, {Name: " ", Kind: domain.KindText}}}, "field 2 has no name"},
		{"DuplicateName", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindText}, {Name: "a", Kind: domain.KindDate}}}, `"a" is used twice`},
		{"UnknownKind", domain.Question{Fields: []domain.Field{{Name: "a", Kind: "color"}}}, `unknown kind "color"`},
		{"EmptyKind", domain.Question{Fields: []domain.Field{{Name: "a"}}}, "unknown kind"},
		{"PasswordKind", domain.Question{Fields: []domain.Field{{Name: "a", Kind: "password"}}}, "unknown kind"},
		{"SelectNoOptions", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindSelect}}}, "no options"},
		{"MultiNoOptions", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindMultiselect}}}, "no options"},
		{"EmptyOptionValue", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindSelect, Options: []domain.Option{{Label: "A"}}}}}, "option without a value"},
		{"DuplicateOption", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindSelect, Options: []domain.Option{{Value: "x"}, {Value: "x", Label: "X"}}}}}, `option "x" twice`},
		{"MinAboveMax", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindNumber, Min: new(2.0), Max: new(1.0)}}}, "minimum above its maximum"},
		{"MinLengthAboveMax", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindText, MinLength: new(2), MaxLength: new(1)}}}, "minimum above its maximum"},
		{"MinItemsAboveMax", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindMultiselect, Options: opts, MinItems: new(2), MaxItems: new(1)}}}, "minimum above its maximum"},
		{"DateFromToday", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindDate, MinDate: domain.Today, MaxDate: "2099-12-31"}}}, ""},
		{"DateLimitNotADate", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindDate, MinDate: "next week"}}}, `date limit "next week"`},
		{"DateMinAboveMax", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindDate, MinDate: "2026-03-02", MaxDate: "2026-03-01"}}}, "minimum above its maximum"},
		{"DateLimitsOnText", domain.Question{Fields: []domain.Field{{Name: "a", Kind: domain.KindText, MinDate: domain.Today}}}, "not a date"},
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
		field domain.Field
		want  []string
	}{
		{"None", domain.Field{Kind: domain.KindText}, nil},
		{"String", domain.Field{Kind: domain.KindText, Default: "main"}, []string{"main"}},
		{"WholeFloat", domain.Field{Kind: domain.KindNumber, Default: 3.0}, []string{"3"}},
		{"Fraction", domain.Field{Kind: domain.KindNumber, Default: 2.50}, []string{"2.5"}},
		{"Large", domain.Field{Kind: domain.KindNumber, Default: 1234567.0}, []string{"1234567"}},
		{"Int", domain.Field{Kind: domain.KindInteger, Default: 7}, []string{"7"}},
		{"NaN", domain.Field{Kind: domain.KindNumber, Default: nanValue()}, nil},
		{"BoolTrue", domain.Field{Kind: domain.KindBoolean, Default: true}, []string{"true"}},
		{"BoolFalse", domain.Field{Kind: domain.KindBoolean, Default: false}, []string{"false"}},
		{"BoolFromText", domain.Field{Kind: domain.KindBoolean, Default: "yes"}, []string{"true"}},
		{"BoolGarbage", domain.Field{Kind: domain.KindBoolean, Default: "maybe"}, nil},
		{"MultiStrings", domain.Field{Kind: domain.KindMultiselect, Default: []string{"a", "b"}}, []string{"a", "b"}},
		{"MultiAny", domain.Field{Kind: domain.KindMultiselect, Default: []any{"a", 2.0, map[string]any{}}}, []string{"a", "2"}},
		{"ListForSingle", domain.Field{Kind: domain.KindSelect, Default: []any{"a", "b"}}, []string{"a"}},
		{"Object", domain.Field{Kind: domain.KindText, Default: map[string]any{"a": 1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.FieldDefault(tt.field); !reflect.DeepEqual(got, tt.want) {
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
	q := domain.Question{Fields: []domain.Field{
		{Name: "config", Label: "Config", Kind: domain.KindFile, Required: true},
		{Name: "log", Label: "Log", Kind: domain.KindFile, Required: true},
		{Name: "count", Label: "Count", Kind: domain.KindInteger, Required: true, Min: new(1.0)},
		{Name: "title", Label: "Title", Kind: domain.KindText, Required: true},
		{Name: "note", Kind: domain.KindTextarea, MaxLength: new(3)},
	}}
	files := map[string]domain.File{"log": {Name: "app.log", MimeType: "text/x-log", Content: []byte("ok")}}
	refused := domain.FieldErrors{"config": "x.bin cannot be attached: it is binary data."}
	got := domain.AnswerErrors(q, url.Values{"count": {"0"}, "note": {"a\r\nb"}, "config": {"ignored"}}, files, refused)
	want := domain.FieldErrors{
		"config": "x.bin cannot be attached: it is binary data.",
		"count":  "Must be at least 1.",
		"title":  "Title is required.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
