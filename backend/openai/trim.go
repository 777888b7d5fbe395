package openai

// Token counts are estimated, not measured: every model family has its own tokenizer, and
// an endpoint may serve any of them. The estimate is the usual rule of thumb for English
// text and code, about 4 bytes per token, plus 4 tokens of framing per message (role and
// separators) and per tool call. Text in other scripts takes more tokens per byte; the
// quarter of the window kept free for the reply absorbs that error.
const (
	bytesPerToken      = 4
	messageOverhead    = 4
	replyShareOfWindow = 4 // 1/4 of the context window stays free for the reply
)

// estimateTokens estimates the tokens of a text.
func estimateTokens(s string) int {
	return (len(s) + bytesPerToken - 1) / bytesPerToken
}

// messageTokens estimates the tokens one message takes in the prompt.
func messageTokens(m message) int {
	n := messageOverhead + estimateTokens(m.Content) + estimateTokens(m.CallID)
	for _, c := range m.Calls {
		n += messageOverhead + estimateTokens(c.ID) + estimateTokens(c.Name) + estimateTokens(c.Arguments)
	}
	return n
}

// budget is how many tokens the prompt may take: the context window less the room kept
// for the reply and what the offered tools take.
func (a *Agent) budget(t turn) int {
	w := a.cfg.ContextWindow
	b := w - w/replyShareOfWindow
	for _, tool := range a.tools(t) {
		b -= estimateTokens(marshalCompact(tool))
	}
	return b
}

// unit is a run of messages kept or dropped together: one message, or an assistant
// tool-call turn with all its tool results (the API rejects either without the other).
type unit struct {
	msgs   []message
	tokens int
}

// trim fits the conversation into budget tokens next to the system prompt, dropping the
// oldest units first. It always keeps the latest user message and the last unit (the
// tool-call turn just answered, or the newest message), even when they alone are over
// the budget: the endpoint then says so. It reports whether anything was dropped.
func trim(system message, msgs []message, budget int) ([]message, bool) {
	var units []unit
	for _, m := range msgs {
		if m.Role == roleTool && len(units) > 0 {
			u := &units[len(units)-1]
			u.msgs = append(u.msgs, m)
			u.tokens += messageTokens(m)
			continue
		}
		units = append(units, unit{msgs: []message{m}, tokens: messageTokens(m)})
	}
	total := messageTokens(system) + estimateTokens(trimmedNote)
	lastUser := -1
	for i, u := range units {
		total += u.tokens
		if u.msgs[0].Role == roleUser {
			lastUser = i
		}
	}
	keep := make([]bool, len(units))
	for i := range keep {
		keep[i] = true
	}
	dropped := false
	for i := 0; i < len(units) && total > budget; i++ {
		if i == lastUser || i == len(units)-1 {
			continue
		}
		keep[i], dropped = false, true
		total -= units[i].tokens
	}
	// What is left must open with the person's turn: some chat templates require it.
	for i := 0; i < len(units) && dropped; i++ {
		if !keep[i] {
			continue
		}
		if units[i].msgs[0].Role == roleUser || i == lastUser {
			break
		}
		keep[i] = false
	}
	out := make([]message, 0, len(msgs))
	for i, u := range units {
		if keep[i] {
			out = append(out, u.msgs...)
		}
	}
	return out, dropped
}
