package views

import (
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestTimelineMarkdown_Context(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	entry := func(ctx any) Entry {
		q := domain.Question{ID: 1, Message: "Approve?", Context: ctx, Fields: []domain.Field{{Name: "ok", Kind: domain.KindBoolean}}}
		return Entry{Kind: EntryQuestion, At: at, Who: "Deployer", Summary: "asked question 1", Text: q.Message, Markdown: true, Question: &q}
	}
	tests := []struct {
		name string
		ctx  any
		want string
	}{
		{"Text", "Build 1.4.2 passed.\nRollback: 3 min", "Context:\n\n> Build 1.4.2 passed.\n> Rollback: 3 min\n\nFields:"},
		{"Object", map[string]any{"build": "1.4.2", "tests": map[string]any{"passed": 212.0, "failed": 0.0}, "regions": []any{"eu", "us"}},
			"Context:\n\n- Build: 1.4.2\n- Regions: eu, us\n- Tests:\n  - Failed: 0\n  - Passed: 212\n\nFields:"},
		{"Table", map[string]any{"venues": []any{map[string]any{"name": "Pike | Loft", "capacity": 40.0}, map[string]any{"name": "Union Hall", "extra": map[string]any{"a": true}}}},
			"- Venues:\n\n  | Capacity | Name | Extra |\n  | --- | --- | --- |\n  | 40 | Pike \\| Loft |  |\n  |  | Union Hall | A: Yes |\n"},
		{"List", []any{"one", map[string]any{"two": 2.0}}, "Context:\n\n- one\n-\n  - Two: 2\n\nFields:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := TimelineMarkdown(TimelineData{Entries: []Entry{entry(tt.ctx)}})
			if !strings.Contains(md, tt.want) {
				t.Errorf("markdown lacks %q:\n%s", tt.want, md)
			}
		})
	}
}
