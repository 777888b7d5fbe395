package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/parley-chat/parley/agent"
)

// Asset returns the URL of a static file; the build id in the query busts caches on upgrade.
func Asset(name string) string { return "/static/" + name + "?v=" + AssetVersion }

// AssetVersion is set at start from the embedded files' hash.
var AssetVersion = "dev"

// inputType is the type of a field's <input>: its kind's, or its format's on a text field.
func inputType(f agent.Field) string {
	switch f.Kind {
	case agent.KindNumber, agent.KindInteger:
		return "number"
	case agent.KindDate:
		return "date"
	case agent.KindText:
		switch f.Format {
		case agent.FormatURI:
			return "url"
		case agent.FormatEmail:
			return "email"
		case agent.FormatDateTime:
			return "datetime-local"
		}
	}
	return "text"
}

// inputValue is what a field's <input> shows. A date-time in RFC 3339 (a default) is
// written as a datetime-local input reads it, in UTC as the field says.
func inputValue(q QuestionView, f agent.Field) string {
	v := q.fieldValue(f)
	if f.Kind == agent.KindText && f.Format == agent.FormatDateTime {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t.UTC().Format("2006-01-02T15:04")
		}
	}
	return v
}

func selectOptions(f agent.Field) []agent.Option {
	if f.Kind == agent.KindBoolean {
		return []agent.Option{{Value: "true", Label: "Yes"}, {Value: "false", Label: "No"}}
	}
	return f.Options
}

func invalid(q QuestionView, f agent.Field) string {
	if q.Errors[f.Name] != "" {
		return "true"
	}
	return "false"
}

func describedBy(q QuestionView, f agent.Field) string {
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
func limitAttrs(f agent.Field) templ.Attributes {
	a := templ.Attributes{}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch f.Kind {
	case agent.KindNumber, agent.KindInteger:
		if f.Min != nil {
			a["min"] = num(*f.Min)
		}
		if f.Max != nil {
			a["max"] = num(*f.Max)
		}
		if f.Kind == agent.KindInteger {
			a["step"] = "1"
		} else {
			a["step"] = "any"
		}
	case agent.KindDate:
		// Today is the server's day when the form is drawn, as when it is answered.
		lo, hi := f.DateLimits(time.Now())
		if lo != "" {
			a["min"] = lo
		}
		if hi != "" {
			a["max"] = hi
		}
	case agent.KindSelect, agent.KindMultiselect, agent.KindBoolean, agent.KindFile:
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
func hasFileField(q agent.Question) bool {
	for _, f := range q.Fields {
		if f.Kind == agent.KindFile {
			return true
		}
	}
	return false
}

// submitLabel is the text of a question's submit button.
func submitLabel(q agent.Question) string {
	if q.SubmitLabel != "" {
		return q.SubmitLabel
	}
	return "Submit"
}

// declineLabel is the text of a question's decline button.
func declineLabel(q agent.Question) string {
	if q.DeclineLabel != "" {
		return q.DeclineLabel
	}
	return "Decline"
}

// choiceRejects reports whether a choice says no (its hint begins "Reject"): its button
// looks so.
func choiceRejects(o agent.Option) bool {
	return strings.HasPrefix(strings.ToLower(o.Hint), "reject")
}
