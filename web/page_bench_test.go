package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/domain"
)

// BenchmarkConversationPage renders the page of a conversation of 2,000 messages: 1,000
// questions and 1,000 replies of the Markdown models write (about 1 KB each).
func BenchmarkConversationPage(b *testing.B) {
	db := newDB(b)
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, 0, "bench", "A long conversation", "")
	if err != nil {
		b.Fatal(err)
	}
	reply := strings.Join(builtin.BenchTokens(300), "")
	for i := range 1000 {
		sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: fmt.Sprintf("Question %d: what changed in the build?", i+1), Author: "bench"})
		step := sent.Step
		if err != nil {
			b.Fatal(err)
		}
		_, in, _ := db.BeginStep(ctx, step)
		db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: fmt.Sprintf("%d-1", step), Author: "Bench", Text: fmt.Sprintf("Reply %d. %s", i+1, reply)})
		db.FinishStep(ctx, step, nil, nil)
	}
	ts := newTestServer(b, db)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.Get(fmt.Sprintf("%s/c/%d", ts.URL, c.ID))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < 1e6 {
			b.Fatalf("page = %d, %d bytes", resp.StatusCode, n)
		}
	}
}
