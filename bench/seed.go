package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/domain"

	"github.com/parley-chat/parley/store"
)

// seedLongConversation writes a conversation of rounds questions and replies (each reply the
// benchmark's Markdown) into a new database at path, as the runner would have.
func seedLongConversation(ctx context.Context, path string, rounds int) error {
	db, err := store.OpenWith(ctx, path, store.Options{Holder: "parley bench"})
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.CreateConversation(ctx, 0, "bench", "A long conversation", "")
	if err != nil {
		return err
	}
	reply := strings.Join(builtin.BenchTokens(300), "")
	for i := range rounds {
		sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: fmt.Sprintf("Question %d: what changed in the build, and why?", i+1), Author: "bench"})
		step := sent.Step
		if err != nil {
			return err
		}
		_, in, err := db.BeginStep(ctx, step)
		if err != nil {
			return err
		}
		// Every reply differs: a page renders each.
		if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage,
			MessageID: fmt.Sprintf("%d-1", step), Author: "Bench", Text: fmt.Sprintf("Reply %d. %s", i+1, reply)}); err != nil {
			return err
		}
		if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
			return err
		}
	}
	return nil
}
