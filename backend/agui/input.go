package agui

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// runInput is AG-UI's RunAgentInput. The optional fields Parley has nothing for are left
// out, never sent as null; tools, context, state and forwardedProps always go (an empty
// list or object where there is nothing), since agents built before 1.0 require them.
type runInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion"`
	State           json.RawMessage `json:"state"`
	Messages        []message       `json:"messages"`
	Tools           []tool          `json:"tools"`
	Context         []contextItem   `json:"context"`
	ForwardedProps  json.RawMessage `json:"forwardedProps"`
	Resume          []resumeEntry   `json:"resume,omitempty"`
}

// message is one message of the history, in AG-UI's format.
type message struct {
	ID         string     `json:"id"`
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

type toolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type contextItem struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// resumeEntry answers one interrupt.
type resumeEntry struct {
	InterruptID string `json:"interruptId"`
	Status      string `json:"status"`
	Payload     any    `json:"payload,omitempty"`
}

// askTool is Parley's frontend tool: the agent calls it to ask the person, and the answer
// comes back as the call's tool message in the next run.
var askTool = tool{Name: domain.AskToolName, Description: domain.AskToolDescription, Parameters: domain.AskToolSchema}

func text(s string) *string { return &s }

// history turns the conversation's log into AG-UI messages, each with an id that stays the
// same from run to run:
//
//   - a person's message is a user message (its prompt: the intent intake made of it and
//     the list of its documents);
//   - a finished agent message is an assistant message; one cut off is left out;
//   - a call of the agent's own tools is an assistant message with the call, followed by
//     the tool message with its result once the agent reported one;
//   - a question asked through request_user_input is the assistant's call of it, followed by
//     the tool message with the person's answer (or why there is none).
func history(events []domain.Event) []message {
	resolutions := map[int64]*domain.Resolution{}
	calls := map[string]*domain.ToolCall{}
	for _, ev := range events {
		switch {
		case ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil:
			resolutions[ev.Resolution.QuestionID] = ev.Resolution
		case ev.Kind == domain.EventToolCall && ev.ToolCall != nil && strings.HasPrefix(ev.ToolCall.Key, toolKeyPrefix):
			calls[ev.ToolCall.Key] = ev.ToolCall
		}
	}
	out := []message{}
	// The assistant messages since the last checkpoint take the agent's own ids from the
	// next one, where it has one for each (see checkpoint.Said).
	var since []int
	used := map[string]bool{}
	for i, ev := range events {
		switch ev.Kind {
		case domain.EventCheckpoint:
			var cp checkpoint
			if json.Unmarshal(ev.Checkpoint, &cp) != nil || cp.Backend != checkpointBackend {
				continue
			}
			if len(cp.Said) == len(since) {
				for j, at := range since {
					if id := cp.Said[j]; !used[id] {
						out[at].ID, used[id] = id, true
					}
				}
			}
			since = since[:0]
		case domain.EventUserMessage:
			id := "user-" + strconv.FormatInt(ev.ID, 10)
			if ev.ID == 0 {
				id = "user-at-" + strconv.Itoa(i) // a log not from the store (tests)
			}
			out = append(out, message{ID: id, Role: "user", Content: text(ev.Prompt())})
		case domain.EventAgentMessage:
			if !ev.Interrupted && strings.TrimSpace(ev.Text) != "" {
				since = append(since, len(out))
				out = append(out, message{ID: "assistant-" + ev.MessageID, Role: "assistant", Content: text(ev.Text)})
			}
		case domain.EventToolCall:
			tc := ev.ToolCall
			if tc == nil || tc.Update || !strings.HasPrefix(tc.Key, toolKeyPrefix) {
				continue
			}
			last := calls[tc.Key]
			args := string(last.Arguments)
			if args == "" {
				args = "{}"
			}
			out = append(out, message{ID: "call-" + tc.ID, Role: "assistant",
				ToolCalls: []toolCall{{ID: tc.ID, Type: "function", Function: function{Name: tc.Tool, Arguments: args}}}})
			if last.Status.Ended() {
				out = append(out, message{ID: "result-" + tc.ID, Role: "tool", ToolCallID: tc.ID, Content: text(last.Result)})
			}
		case domain.EventQuestionAsked:
			q := ev.Question
			if q == nil || q.Key == "" || strings.HasPrefix(q.Key, "interrupt:") {
				continue
			}
			args := domain.MarshalCompact(domain.UserInputRequest{Prompt: q.Message, Context: q.Context, RequestType: q.Type})
			out = append(out, message{ID: "call-" + q.Key, Role: "assistant",
				ToolCalls: []toolCall{{ID: q.Key, Type: "function", Function: function{Name: domain.AskToolName, Arguments: args}}}},
				message{ID: "result-" + q.Key, Role: "tool", ToolCallID: q.Key, Content: text(domain.ToolResult(q, resolutions[q.ID]))})
		}
	}
	return out
}

// resume answers every open interrupt of the checkpoint (at index at of events) exactly
// once: resolved with the person's typed answers, or cancelled (declined, expired, set
// aside by a new message, never asked) with the reason as the payload where there is one.
// An interrupt past its expiresAt is cancelled whatever the answer, and so is every one when
// the person sent a new message (answers a failed run never delivered included: the new
// message sets them aside, so that a resume the agent refused cannot hold the thread).
func resume(events []domain.Event, cp checkpoint, at int, now time.Time, newMessage bool) []resumeEntry {
	if len(cp.Open) == 0 {
		return nil
	}
	asked := map[string]*domain.Question{}
	resolutions := map[int64]*domain.Resolution{}
	for _, ev := range events[at+1:] {
		switch {
		case ev.Kind == domain.EventQuestionAsked && ev.Question != nil:
			asked[ev.Question.Key] = ev.Question
		case ev.Kind == domain.EventQuestionResolved && ev.Resolution != nil:
			resolutions[ev.Resolution.QuestionID] = ev.Resolution
		}
	}
	out := make([]resumeEntry, 0, len(cp.Open))
	for _, in := range cp.Open {
		cancel := func(reason string) {
			e := resumeEntry{InterruptID: in.ID, Status: "cancelled"}
			if reason = strings.TrimSpace(reason); reason != "" {
				e.Payload = map[string]string{"reason": reason}
			}
			out = append(out, e)
		}
		var res *domain.Resolution
		q := asked[interruptKey(in.ID)]
		if q != nil {
			res = resolutions[q.ID]
		}
		switch {
		case in.Refusal != "":
			cancel(in.Refusal)
		case res == nil:
			cancel("The person was not asked.")
		case res.Outcome != domain.Answered:
			cancel(res.Reason)
		case newMessage:
			cancel("The person sent a new message instead.")
		case expired(in.Expires, now):
			cancel("The answer came after the interrupt expired.")
		default:
			e := resumeEntry{InterruptID: in.ID, Status: "resolved"}
			if len(res.Values) > 0 {
				e.Payload = payload(q, res.Values)
			}
			out = append(out, e)
		}
	}
	return out
}

// expired reports whether an interrupt's expiresAt has passed.
func expired(expires string, now time.Time) bool {
	t, ok := parseTime(expires)
	return ok && !now.Before(t)
}

// parseTime reads an ISO 8601 time as expiresAt carries it.
func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// payload is the answers as the response schema has them: JSON fields as the objects
// they hold.
func payload(q *domain.Question, values map[string]any) map[string]any {
	out := typed(values)
	for _, f := range q.Fields {
		if s, ok := out[f.Name].(string); ok && f.Format == domain.FormatJSON {
			var v any
			if json.Unmarshal([]byte(s), &v) == nil {
				out[f.Name] = v
			}
		}
	}
	return out
}

// typed is the answers as JSON has them (int64 stays an integer, []string a list).
func typed(values map[string]any) map[string]any {
	out := map[string]any{}
	b, err := json.Marshal(values)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// contextOf is the ambient information a run is given: the language the person writes in.
func contextOf(in domain.StepInput) []contextItem {
	out := []contextItem{}
	if in.Language != "" {
		out = append(out, contextItem{Description: "The language the person writes in (ISO 639-1)", Value: in.Language})
	}
	return out
}

// newThreadID names a conversation's thread: Parley's own prefix, the conversation, and a
// random part so that two Parley installations never share a thread on one agent.
func newThreadID(conversationID int64) string {
	return fmt.Sprintf("parley-%d-%s", conversationID, randomHex(8))
}
