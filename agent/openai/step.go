package openai

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-chat/parley/agent"
)

// maxToolRetries is how many times in one step the model is told that its tool calls could
// not be used and asked again before the step fails.
const maxToolRetries = 2

// Step runs one model turn on the conversation rebuilt from in.History. The trigger makes
// no difference: a new message, a resume with answers and a Retry after a fault all send the
// history as it stands (without the partial text of a failed reply; see rebuild). When the
// model calls request_user_input, the turn is checkpointed and each call asked; the next
// step sends the answers back as the tool results. Each step is a fresh request, so
// waiting for a person never runs into a model timeout.
func (a *Agent) Step(ctx context.Context, in agent.StepInput, out agent.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msgs := rebuild(in.History)
	for attempt := 0; ; attempt++ {
		r, err := a.complete(ctx, a.prompt(msgs), out)
		if err != nil {
			return err
		}
		if len(r.calls) == 0 {
			if strings.TrimSpace(r.content) == "" {
				return a.faultf(nil, "the model sent an empty reply")
			}
			return a.finish(r, out)
		}
		calls := uniqueIDs(r.calls, in.StepID, attempt)
		qs, results, problem := a.questions(calls)
		cp := checkpoint{Backend: checkpointBackend, Version: 1, Content: r.content, Calls: calls, Results: results}
		if err := out.Checkpoint(cp); err != nil {
			return err
		}
		if problem == nil {
			for _, q := range qs {
				if _, err := out.Ask(q); err != nil {
					return err
				}
			}
			return nil
		}
		if attempt >= maxToolRetries {
			return a.faultf(problem, "the model's request_user_input calls could not be used after %d tries: %v", attempt+1, problem)
		}
		// Tell the model what was wrong, as the results of its calls, and let it try again.
		msgs = append(msgs, cp.assistantTurn())
		for _, c := range calls {
			msgs = append(msgs, message{Role: roleTool, Content: results[c.ID], CallID: c.ID})
		}
	}
}

// prompt puts the system prompt in front of the conversation, trimmed to the budget.
func (a *Agent) prompt(msgs []message) []message {
	system := message{Role: roleSystem, Content: a.systemPrompt()}
	kept, dropped := trim(system, msgs, a.budget())
	if dropped {
		system.Content += trimmedNote
	}
	return append([]message{system}, kept...)
}

// questions turns the calls of one reply into questions. When any call cannot be used,
// nothing is asked: problem is the first reason, and results tell the model, call by call,
// what to fix.
func (a *Agent) questions(calls []toolCall) ([]agent.Question, map[string]string, error) {
	qs := make([]agent.Question, 0, len(calls))
	problems := make([]error, len(calls))
	var first error
	for i, c := range calls {
		q, err := a.question(c)
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
// the same one twice, get ids made from the step and attempt. Empty arguments become {}.
func uniqueIDs(calls []toolCall, stepID int64, attempt int) []toolCall {
	seen := map[string]bool{}
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_parley_%d_%d_%d", stepID, attempt, i)
		}
		seen[calls[i].ID] = true
		if strings.TrimSpace(calls[i].Arguments) == "" {
			calls[i].Arguments = "{}"
		}
	}
	return calls
}
