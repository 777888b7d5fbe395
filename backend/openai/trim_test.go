package openai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// oldExchanges is a long earlier conversation: n exchanges of about 100 tokens a message.
func oldExchanges(n int) []domain.Event {
	var out []domain.Event
	for i := range n {
		out = append(out,
			domain.Event{Kind: domain.EventUserMessage, Text: fmt.Sprintf("old question %d: %s", i, strings.Repeat("q", 400))},
			domain.Event{Kind: domain.EventRunState, State: domain.StateRunning},
			domain.Event{Kind: domain.EventAgentMessage, Text: fmt.Sprintf("old answer %d: %s", i, strings.Repeat("a", 400))},
			domain.Event{Kind: domain.EventRunState, State: domain.StateDone},
		)
	}
	return out
}

// checkToolPairs fails when a tool message does not follow its call, or a call lacks its result.
func checkToolPairs(t *testing.T, msgs []sentMessage) {
	t.Helper()
	for i, m := range msgs {
		if len(m.ToolCalls) > 0 {
			for j, tc := range m.ToolCalls {
				if k := i + 1 + j; k >= len(msgs) || msgs[k].Role != "tool" || msgs[k].ToolCallID != tc.ID {
					t.Errorf("message %d: call %s is not followed by its result", i, tc.ID)
				}
			}
		}
		if m.Role == "tool" {
			ok := false
			for k := i - 1; k >= 0 && !ok; k-- {
				for _, tc := range msgs[k].ToolCalls {
					ok = ok || tc.ID == m.ToolCallID
				}
				if msgs[k].Role != "tool" {
					break
				}
			}
			if !ok {
				t.Errorf("message %d: tool result %s without its call", i, m.ToolCallID)
			}
		}
	}
}

func TestStep_TrimsToContextWindow(t *testing.T) {
	tests := []struct {
		name   string
		latest string
		// wantOld says whether any old exchange fits next to the current turn.
		wantOld bool
	}{
		{"short latest message", "Plan my party", true},
		{"latest message over the budget", "Plan my party " + strings.Repeat("x", 20000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t,
				toolCalls("", askCall("call_t", `{"prompt":"How many guests?","request_type":"clarification","context":{"note":"`+strings.Repeat("n", 800)+`"}}`)),
				text("Got it."))
			c := newConvo(t, newAgent(t, srv.url(), func(c *openai.Config) { c.ContextWindow = 4000 }))
			c.History = oldExchanges(30)
			rec := c.MustSend(tt.latest)
			c.Answer(rec.Questions()[0], form("answer", "40"))
			c.MustResume()

			for i, req := range srv.sent() {
				msgs := req.Messages
				if msgs[0].Role != "system" || !strings.Contains(msgs[0].Content, "You are a careful helper.") {
					t.Fatalf("request %d: the system prompt is not first", i)
				}
				if !strings.Contains(msgs[0].Content, "left out to fit") {
					t.Errorf("request %d: the system prompt does not say messages were left out", i)
				}
				if tt.wantOld {
					// About 4 bytes a token, 4 tokens a message: within 3/4 of the window.
					tokens := 0
					for _, m := range msgs {
						tokens += 4 + (len(m.Content)+len(m.ToolCallID)+3)/4
						for _, tc := range m.ToolCalls {
							tokens += 4 + (len(tc.ID)+len(tc.Function.Name)+len(tc.Function.Arguments)+3)/4
						}
					}
					if tools := toolsBytes(t, req); tokens+tools/4 > 3000 {
						t.Errorf("request %d: about %d tokens sent, want at most 3000", i, tokens+tools/4)
					}
				} else if len(msgs) > 4 {
					t.Errorf("request %d: %d messages sent, want the system prompt and the current turn", i, len(msgs))
				}
				for _, m := range msgs {
					if strings.HasPrefix(m.Content, "old question 0:") {
						t.Errorf("request %d: the oldest message was kept", i)
					}
				}
				hasOld := strings.HasPrefix(msgs[1].Content, "old ")
				if hasOld != tt.wantOld {
					t.Errorf("request %d: old messages kept: got %v, want %v", i, hasOld, tt.wantOld)
				}
				checkToolPairs(t, msgs)
			}
			last := srv.last().Messages
			n := len(last)
			if last[n-3].Role != "user" || last[n-3].Content != tt.latest {
				t.Errorf("the latest user message is not kept before the tool call: %+v", last[n-3].Role)
			}
			if len(last[n-2].ToolCalls) != 1 || last[n-1].Content != `{"outcome":"answered","values":{"answer":"40"}}` {
				t.Errorf("the answered tool call is not kept whole: %+v %+v", last[n-2], last[n-1])
			}
		})
	}
}

func TestStep_ShortConversationIsNotTrimmed(t *testing.T) {
	srv := newFakeServer(t, text("Sure."))
	c := newConvo(t, newAgent(t, srv.url()))
	c.History = oldExchanges(2)
	c.MustSend("And now?")
	req := srv.last()
	if len(req.Messages) != 6 {
		t.Errorf("sent %d messages, want all 6", len(req.Messages))
	}
	if strings.Contains(req.Messages[0].Content, "left out") {
		t.Error("the system prompt says messages were left out")
	}
}

// toolsBytes is the size of the tools part of a request.
func toolsBytes(t *testing.T, req sentRequest) int {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(req.raw, &body); err != nil {
		t.Fatal(err)
	}
	return len(body["tools"])
}
