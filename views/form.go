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

func inputType(k agent.FieldKind) string {
	switch k {
	case agent.KindNumber, agent.KindInteger:
		return "number"
	case agent.KindDate:
		return "date"
	}
	return "text"
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
