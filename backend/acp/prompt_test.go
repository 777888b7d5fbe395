package acp

import (
	"testing"

	"github.com/parley-chat/parley/domain"
)

// Messages sent together from the queue are one prompt; what came before is the earlier
// conversation a fresh session is told.
func TestPrompt_TheRunsMessagesTogether(t *testing.T) {
	history := []domain.Event{
		{Kind: domain.EventUserMessage, RunID: 1, Text: "fix the build"},
		{Kind: domain.EventAgentMessage, RunID: 1, Text: "Fixed."},
		{Kind: domain.EventUserMessage, RunID: 2, Text: "now the tests", Queued: 3},
		{Kind: domain.EventUserMessage, RunID: 2, Text: "and the docs"},
		{Kind: domain.EventRunState, RunID: 2, State: domain.StateRunning},
	}
	msgs, earlier := prompt(history)
	if len(msgs) != 2 || msgs[0].Text != "now the tests" || msgs[1].Text != "and the docs" {
		t.Fatalf("prompt = %+v, want the run's two messages", msgs)
	}
	if earlier != "Person: fix the build\n\nYou: Fixed." {
		t.Errorf("earlier = %q", earlier)
	}
}
