package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/parley-chat/parley/domain"
)

// Asset returns the URL of a static file; the build id in the query busts caches on upgrade.
func Asset(name string) string { return "/static/" + name + "?v=" + AssetVersion }

// AssetVersion is set at start from the embedded files' hash.
var AssetVersion = "dev"

// inputType is the type of a field's <input>: its kind's, or its format's on a text field.
func inputType(f domain.Field) string {
	switch f.Kind {
	case domain.KindNumber, domain.KindInteger:
		return "number"
	case domain.KindDate:
		return "date"
	case domain.KindText:
		switch f.Format {
		case domain.FormatURI:
			return "url"
		case domain.FormatEmail:
			return "email"
		case domain.FormatDateTime:
			return "datetime-local"
		}
	}
	return "text"
}

// inputValue is what a field's <input> shows. A date-time in RFC 3339 (a default) is
// written as a datetime-local input reads it, in UTC as the field says.
func inputValue(q QuestionView, f domain.Field) string {
	v := q.fieldValue(f)
	if f.Kind == domain.KindText && f.Format == domain.FormatDateTime {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t.UTC().Format("2006-01-02T15:04")
		}
	}
	return v
}

func selectOptions(f domain.Field) []domain.Option {
	if f.Kind == domain.KindBoolean {
		return []domain.Option{{Value: "true", Label: "Yes"}, {Value: "false", Label: "No"}}
	}
	return f.Options
}

func invalid(q QuestionView, f domain.Field) string {
	if q.Errors[f.Name] != "" {
		return "true"
	}
	return "false"
}

func describedBy(q QuestionView, f domain.Field) string {
	var ids []string
	if f.Description != "" {
		ids = append(ids, FieldID(q.Record, f.Name)+"-help")
	}
	if q.Errors[f.Name] != "" {
		ids = append(ids, FieldID(q.Record, f.Name)+"-error")
	}
	return strings.Join(ids, " ")
}

// limitAttrs mirrors the field's limits as HTML attributes, for the browser's own hints.
func limitAttrs(f domain.Field) templ.Attributes {
	a := templ.Attributes{}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch f.Kind {
	case domain.KindNumber, domain.KindInteger:
		if f.Min != nil {
			a["min"] = num(*f.Min)
		}
		if f.Max != nil {
			a["max"] = num(*f.Max)
		}
		if f.Kind == domain.KindInteger {
			a["step"] = "1"
		} else {
			a["step"] = "any"
		}
	case domain.KindDate:
		// Today is the server's day when the form is drawn, as when it is answered.
		lo, hi := f.DateLimits(time.Now())
		if lo != "" {
			a["min"] = lo
		}
		if hi != "" {
			a["max"] = hi
		}
	case domain.KindSelect, domain.KindMultiselect, domain.KindBoolean, domain.KindFile:
	default:
		if f.MinLength != nil {
			a["minlength"] = strconv.Itoa(*f.MinLength)
		}
		if f.MaxLength != nil {
			a["maxlength"] = strconv.Itoa(*f.MaxLength)
		}
	}
	return a
}

// hasFileField reports whether a question asks for a file: its form is then sent as multipart.
func hasFileField(q domain.Question) bool {
	for _, f := range q.Fields {
		if f.Kind == domain.KindFile {
			return true
		}
	}
	return false
}

// submitLabel is the text of a question's submit button.
func submitLabel(q domain.Question) string {
	if q.SubmitLabel != "" {
		return q.SubmitLabel
	}
	return "Submit"
}

// declineLabel is the text of a question's decline button.
func declineLabel(q domain.Question) string {
	if q.DeclineLabel != "" {
		return q.DeclineLabel
	}
	return "Decline"
}

// choiceRejects reports whether a choice says no (its hint begins "Reject"): its button
// looks so.
func choiceRejects(o domain.Option) bool {
	return strings.HasPrefix(strings.ToLower(o.Hint), "reject")
}
