package builtin

import (
	"context"
	"strings"
	"time"

	"github.com/parley-chat/parley/agent"
)

// PlatformEngineer is the built-in platform-engineering assistant. It asks the way many
// agent platforms do, with a "UserInputMetaData:" message the runner turns into a form, and
// once answered says exactly what it would do. It never calls GitHub, Jira or anything else.
type PlatformEngineer struct {
	pace time.Duration
}

// NewPlatformEngineer returns the platform-engineer agent.
func NewPlatformEngineer(opts Options) *PlatformEngineer {
	return &PlatformEngineer{pace: opts.Pace}
}

// Info describes the platform engineer in the agent picker.
func (e *PlatformEngineer) Info() agent.Info {
	return agent.Info{
		Name:  "platform-engineer",
		Title: "Platform engineer",
		Description: "Built-in demo: prepares a GitHub pull request, a Jira issue or a configuration update, " +
			"asking for the details in a form. Deterministic and offline: it tells you exactly what it " +
			"would do and performs no external action.",
		Builtin: true,
	}
}

// engineerState is the platform engineer's checkpoint.
type engineerState struct {
	RunID  int64  `json:"run_id"`
	Action string `json:"action,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// Step answers a new message with a form (or with what it can do), and a resolved form
// with what it would do.
func (e *PlatformEngineer) Step(ctx context.Context, in agent.StepInput, out agent.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sp := speaker{ctx: ctx, out: out, pace: e.pace}
	var st engineerState
	found, err := agent.LastCheckpoint(in.History, &st)
	at := lastCheckpointAt(in.History)
	if err != nil || !found {
		found, at = false, -1
	}
	newMessage := in.Trigger == agent.TriggerMessage && len(userMessagesAfter(in.History, at)) > 0
	if found && st.RunID == in.RunID && !newMessage {
		if st.Done {
			return nil
		}
		// The runner turned the form message into the first question after the checkpoint.
		if asked := questionsAfter(in.History, at); len(asked) > 0 {
			res, ok := resolutionOf(in.History, asked[0].ID)
			if !ok {
				return nil
			}
			return e.respond(sp, st, res)
		}
	}
	msgs := userMessagesAfter(in.History, -1)
	text := ""
	if len(msgs) > 0 {
		text = msgs[len(msgs)-1].Text
	}
	act, ok := actionFor(text)
	if !ok {
		if err := sp.say("", capabilities); err != nil {
			return err
		}
		return out.Checkpoint(engineerState{RunID: in.RunID, Done: true})
	}
	if err := out.Checkpoint(engineerState{RunID: in.RunID, Action: act.Name}); err != nil {
		return err
	}
	q := agent.Question{Message: act.Message, Fields: act.Fields(text)}
	if err := sp.stream(agent.FormatUserInputMetaData(q)); err != nil {
		return err
	}
	return out.EndMessage()
}

// respond finishes a run once its form is resolved.
func (e *PlatformEngineer) respond(sp speaker, st engineerState, res agent.Resolution) error {
	act, ok := actionNamed(st.Action)
	if !ok || res.Outcome == agent.Superseded {
		return nil
	}
	text := ""
	if res.Outcome == agent.Answered {
		text = act.Describe(res.Values) + "\n\n" + offlineNote
	} else {
		text = "Okay, I won't " + act.Verb + ". Nothing was created or changed. Send a new message if you want to start again."
	}
	if err := sp.say("", text); err != nil {
		return err
	}
	st.Done = true
	return sp.out.Checkpoint(st)
}

// offlineNote ends every "what I would do" answer.
const offlineNote = "_I'm Parley's built-in platform engineer: I run offline and performed no external action. " +
	"Nothing was created or changed; run the steps above yourself, or ask an agent connected to your tools._"

// capabilities is the answer to anything the platform engineer cannot help with.
var capabilities = strings.Join([]string{
	"I'm Parley's built-in platform engineer. I can prepare three kinds of change, asking you for the details in a form:",
	"",
	"- **GitHub pull request**: source branch, title, description and base branch (try “Create a pull request from branch feature/login”).",
	"- **Jira issue**: title, description, priority and assignee (try “Open a Jira issue for the login timeout, high priority”).",
	"- **Configuration update**: key, value, and whether to apply it immediately (try “Update the config: set cache.ttl to 300”).",
	"",
	"I run offline and perform no external action: once you've filled in the form I tell you exactly what I would do.",
}, "\n")
