package builtin

import (
	"context"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// PlatformEngineer is the built-in platform-engineering assistant. It asks the way many
// agent platforms do, with a "UserInputMetaData:" message the runner turns into a form, and
// once answered says exactly what it would do. It never calls GitHub, Jira or anything else.
// Documents that come with a message (logs, stack traces, tables) it reads itself and
// summarizes first (see engineer_documents.go).
type PlatformEngineer struct {
	pace time.Duration
}

// NewPlatformEngineer returns the platform-engineer agent.
func NewPlatformEngineer(opts Options) *PlatformEngineer {
	return &PlatformEngineer{pace: opts.Pace}
}

// Info describes the platform engineer in the agent picker.
func (e *PlatformEngineer) Info() domain.Info {
	return domain.Info{
		Name:  "platform-engineer",
		Title: "Platform engineer",
		Description: "Built-in demo: prepares a GitHub pull request, a Jira issue or a configuration update, " +
			"asking for the details in a form. Deterministic and offline: it tells you exactly what it " +
			"would do and performs no external action.",
		Builtin:  true,
		Kind:     "builtin",
		Icon:     "git-pull-request",
		Starters: []string{"Open a pull request for the login fix", "File a Jira issue about the flaky login test", "Update the service's replica count"},
	}
}

// engineerState is the platform engineer's checkpoint.
type engineerState struct {
	RunID  int64  `json:"run_id"`
	Action string `json:"action,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// Step answers a new message with a form (or with what it can do), after a triage of its
// documents when it has some, and a resolved form with what it would do.
func (e *PlatformEngineer) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sp := speaker{ctx: ctx, out: out, pace: e.pace}
	var st engineerState
	found, err := domain.LastCheckpoint(in.History, &st)
	at := lastCheckpointAt(in.History)
	if err != nil || !found {
		found, at = false, -1
	}
	newMessage := in.Trigger == domain.TriggerMessage && len(userMessagesAfter(in.History, at)) > 0
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
			return e.respond(sp, st, res, in.Language)
		}
	}
	var msg domain.Event
	if msgs := userMessagesAfter(in.History, -1); len(msgs) > 0 {
		msg = msgs[len(msgs)-1]
	}
	text := messageText(msg)
	if len(msg.Documents) > 0 {
		// The documents first: what they say may be all the person wanted.
		if err := sp.say("", triageReply(ctx, in, msg.Documents)); err != nil {
			return err
		}
	}
	act, ok := actionFor(text)
	if !ok {
		reply := capabilities(in.Language)
		if len(msg.Documents) > 0 {
			reply = phrase(in.Language, "triage.next")
		}
		if err := sp.say("", reply); err != nil {
			return err
		}
		return out.Checkpoint(engineerState{RunID: in.RunID, Done: true})
	}
	if err := out.Checkpoint(engineerState{RunID: in.RunID, Action: act.Name}); err != nil {
		return err
	}
	q := domain.Question{Message: act.Message, Fields: act.Fields(text)}
	if err := sp.stream(domain.FormatUserInputMetaData(q)); err != nil {
		return err
	}
	return out.EndMessage()
}

// respond finishes a run once its form is resolved.
func (e *PlatformEngineer) respond(sp speaker, st engineerState, res domain.Resolution, lang string) error {
	act, ok := actionNamed(st.Action)
	if !ok || res.Outcome == domain.Superseded {
		return nil
	}
	text := ""
	if res.Outcome == domain.Answered {
		text = act.Describe(res.Values) + "\n\n" + phrase(lang, "engineer.offline")
	} else {
		text = "Okay, I won't " + act.Verb + ". Nothing was created or changed. Send a new message if you want to start again."
	}
	if err := sp.say("", text); err != nil {
		return err
	}
	st.Done = true
	return sp.out.Checkpoint(st)
}

// capabilities is the answer to anything the platform engineer cannot help with. The
// examples stay English: they are what it understands.
func capabilities(lang string) string {
	return strings.Join([]string{
		phrase(lang, "engineer.intro"),
		"",
		"- **GitHub pull request**: source branch, title, description and base branch (try “Create a pull request from branch feature/login”).",
		"- **Jira issue**: title, description, priority and assignee (try “Open a Jira issue for the login timeout, high priority”).",
		"- **Configuration update**: key, value, and whether to apply it immediately (try “Update the config: set cache.ttl to 300”).",
		"",
		phrase(lang, "engineer.outro"),
	}, "\n")
}
