package openai

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// maxToolRetries is how many times in one step the model is told that its tool calls could
// not be used and asked again before the step fails.
const maxToolRetries = 2

// turn is what the requests of a step offer and tell the model besides the conversation.
type turn struct {
	// read offers read_document: a message of the history lists documents.
	read bool
	// final forbids tool calls: the model has read all it may in this step and must answer.
	final bool
	// language is the person's language (ISO 639-1), "" when unknown.
	language string
	// tools are the tool servers' tools of the step, and the servers missing.
	tools toolTurn
}

// Step runs one model turn on the conversation rebuilt from in.History. The trigger makes
// no difference: a new message, a resume with answers and a Retry after a fault all send the
// history as it stands (without the partial text of a failed reply; see rebuild). When the
// model calls request_user_input, the turn is checkpointed and each call asked; the next
// step sends the answers back as the tool results. Calls of read_document are answered at
// once, within the step, and the model called again (up to maxReadRounds times); their
// results are checkpointed with the turn, so that later steps send the same ones. Each step
// is a fresh request, so waiting for a person never runs into a model timeout.
func (a *Agent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tools := a.toolTurn()
	// Tool calls that waited for the person go on first (or end, if the person moved on);
	// the model hears of them after.
	added, waiting, err := a.continueTools(ctx, in, out, tools)
	if err != nil || waiting {
		return err
	}
	if in.Trigger == domain.TriggerResume && a.cancelled(in.History) {
		// The person stopped the run from a question: the model is not asked again until
		// the next message, which it reads with the cancelled question in the history.
		if err := out.Text(stoppedText); err != nil {
			return err
		}
		return out.EndMessage()
	}
	history := append(in.History[:len(in.History):len(in.History)], added...)
	msgs := rebuild(history)
	lib := listedDocuments(in.History, in.Documents)
	t := turn{read: lib != nil, language: in.Language, tools: tools}
	retries, reads := 0, 0
	for round := 0; ; round++ {
		r, err := a.complete(ctx, a.prompt(msgs, t), t, out)
		if err != nil {
			return err
		}
		if len(r.calls) == 0 {
			if strings.TrimSpace(r.content) == "" {
				return a.faultf(nil, "the model sent an empty reply")
			}
			return a.finish(r, out)
		}
		calls := uniqueIDs(r.calls, in.StepID, round)
		var asks, readCalls, toolCalls []toolCall
		for _, c := range calls {
			switch {
			case c.Name == readToolName && t.read:
				readCalls = append(readCalls, c)
			case a.isToolCall(c, t):
				toolCalls = append(toolCalls, c)
			default:
				asks = append(asks, c)
			}
		}
		results := map[string]string{}
		if len(readCalls) > 0 {
			reads++
			if reads > maxReadRounds+1 {
				return a.faultf(nil, "the model kept reading documents after being told to answer (%d rounds)", maxReadRounds)
			}
			for _, c := range readCalls {
				res := readLimitResult
				if reads <= maxReadRounds {
					if res, err = a.read(ctx, lib, c); err != nil {
						return err
					}
				}
				results[c.ID] = res
			}
			t.final = reads >= maxReadRounds
		}
		qs, problems, problem := a.questions(asks, t)
		maps.Copy(results, problems)
		if problem != nil {
			// Nothing runs until the model sends all its calls again, corrected.
			for _, c := range toolCalls {
				results[c.ID] = notRunResult
			}
			toolCalls = nil
		}
		cp := checkpoint{Backend: checkpointBackend, Version: 1, Content: r.content, Calls: calls}
		if len(results) > 0 {
			cp.Results = results
		}
		if err := out.Checkpoint(cp); err != nil {
			return err
		}
		ran, waiting, err := a.toolCalls(ctx, in, out, t, toolCalls, round)
		if err != nil {
			return err
		}
		maps.Copy(results, ran)
		if len(asks) > 0 && problem == nil {
			for _, q := range qs {
				if _, err := out.Ask(q); err != nil {
					return err
				}
			}
			return nil
		}
		if waiting {
			return nil
		}
		if problem != nil {
			if retries >= maxToolRetries {
				return a.faultf(problem, "the model's tool calls could not be used after %d tries: %v", retries+1, problem)
			}
			retries++
		}
		// Send the results (what was read, or what was wrong) and let the model go on.
		msgs = append(msgs, cp.assistantTurn())
		for _, c := range calls {
			msgs = append(msgs, message{Role: roleTool, Content: results[c.ID], CallID: c.ID})
		}
	}
}

// stoppedText ends a run the person cancelled from one of the agent's questions.
const stoppedText = "Stopped, as you asked. Send a message when you want to go on."

// cancelled reports whether the person cancelled one of the agent's own questions (not a
// tool server's, whose Cancel goes to the server) since the last message.
func (a *Agent) cancelled(history []domain.Event) bool {
	asked := map[int64]string{}
	for _, ev := range history {
		if ev.Kind == domain.EventQuestionAsked && ev.Question != nil {
			asked[ev.Question.ID] = ev.Question.Asker
		}
	}
	for i := len(history) - 1; i >= 0; i-- {
		ev := history[i]
		if ev.Kind == domain.EventUserMessage {
			return false
		}
		if r := ev.Resolution; ev.Kind == domain.EventQuestionResolved && r != nil && r.Outcome == domain.Cancelled && asked[r.QuestionID] == a.info.Title {
			return true
		}
	}
	return false
}

// notRunResult is the result of a tool server's call in a reply with a call that could not be used.
const notRunResult = `{"error":"Not run, because another tool call in the same reply could not be used. Send your calls again, corrected."}`

// readLimitResult answers read_document calls past the step's limit.
const readLimitResult = "Error: you have read documents as often as one turn allows. Answer now with what you have read; say what you could not check."

// prompt puts the system prompt in front of the conversation, trimmed to the budget.
func (a *Agent) prompt(msgs []message, t turn) []message {
	system := message{Role: roleSystem, Content: a.systemPrompt(t)}
	kept, dropped := trim(system, msgs, a.budget(t))
	if dropped {
		system.Content += trimmedNote
	}
	return append([]message{system}, kept...)
}

// questions turns the request_user_input calls of one reply into questions. When any call
// cannot be used, nothing is asked: problem is the first reason, and results tell the model,
// call by call, what to fix.
func (a *Agent) questions(calls []toolCall, t turn) ([]domain.Question, map[string]string, error) {
	qs := make([]domain.Question, 0, len(calls))
	problems := make([]error, len(calls))
	var first error
	for i, c := range calls {
		q, err := a.question(c, t)
		if err != nil {
			problems[i] = err
			if first == nil {
				first = fmt.Errorf("%s: %w", c.Name, err)
			}
			continue
		}
		qs = append(qs, q)
	}
	if first == nil {
		return qs, nil, nil
	}
	results := make(map[string]string, len(calls))
	for i, c := range calls {
		if problems[i] != nil {
			results[c.ID] = invalidResult(problems[i].Error())
		} else {
			results[c.ID] = notAskedResult
		}
	}
	return nil, results, first
}

// uniqueIDs gives every call an id unique in the conversation: servers that send none, or
// the same one twice, get ids made from the step and round. Empty arguments become {}.
func uniqueIDs(calls []toolCall, stepID int64, round int) []toolCall {
	seen := map[string]bool{}
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_parley_%d_%d_%d", stepID, round, i)
		}
		seen[calls[i].ID] = true
		if strings.TrimSpace(calls[i].Arguments) == "" {
			calls[i].Arguments = "{}"
		}
	}
	return calls
}
