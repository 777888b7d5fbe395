package humantext

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// AnswerText renders one answered value for people to read.
func AnswerText(f domain.Field, v any) string {
	switch x := v.(type) {
	case nil, bool, float64:
		return scalarText(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = optionLabel(f, fmt.Sprint(e))
		}
		return strings.Join(parts, ", ")
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = optionLabel(f, e)
		}
		return strings.Join(parts, ", ")
	case string:
		return optionLabel(f, x)
	}
	return fmt.Sprint(v)
}

func optionLabel(f domain.Field, v string) string {
	for _, o := range f.Options {
		if o.Value == v {
			return o.Text()
		}
	}
	return v
}
