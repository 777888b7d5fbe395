package store

import (
	"slices"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// A batch saved just after its message ended (its text gathered before the end) counts for
// nothing: it is useless, not kept for ever; an end that did not commit is undone.
func TestDraftIndex_EndsAndLateBatches(t *testing.T) {
	var x draftIndex
	d := func(msg string) []domain.Draft { return []domain.Draft{{ConversationID: 1, MessageID: msg, Text: "t"}} }
	if !x.add(10, d("m1")) {
		t.Fatal("a batch of a message being written counts")
	}
	free, _ := x.finish(1, "m1")
	if !slices.Equal(free, []int64{10}) {
		t.Fatalf("ending m1 frees %v; want [10]", free)
	}
	if x.add(11, d("m1")) {
		t.Error("a batch of m1 saved after m1 ended counts; want it useless")
	}
	if !x.add(12, d("m2")) {
		t.Fatal("a batch of m2 counts")
	}
	free, undo := x.finish(1, "m2")
	if !slices.Equal(free, []int64{12}) {
		t.Fatalf("ending m2 frees %v; want [12]", free)
	}
	undo() // the end's transaction did not commit: m2 is still being written
	if !x.add(13, d("m2")) {
		t.Error("after the undo, a batch of m2 does not count")
	}
	if free, _ := x.finish(1, ""); !slices.Equal(slices.Sorted(slices.Values(free)), []int64{12, 13}) {
		t.Errorf("the step's end frees %v; want [12 13]", free)
	}
}
