package a2a

import (
	"encoding/json"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// checkpointBackend marks this back end's checkpoints among any others in the log.
const checkpointBackend = "a2a"

// checkpoint is the remote side of the conversation, stored (out.Checkpoint) whenever it
// changes: when the agent accepts a message, learns a task or context id, or moves the task
// to another state. Steps never keep it in memory; they read the newest one from History.
//
//	{"backend":"a2a","v":1,"task_id":"0193…","context_id":"0193…","state":"input-required",
//	 "sent":2,"delivered":7,"artifacts":3}
//
// sent counts the person's messages the agent has accepted, so that a Retry sends only what
// never arrived; delivered is the id of the last question whose resolution the agent
// accepted, so that a re-delivered resume does not answer twice; artifacts counts the task's
// artifacts shown when it last paused or ended, so that catching up shows only newer ones.
type checkpoint struct {
	Backend   string        `json:"backend"`
	Version   int           `json:"v"`
	TaskID    sdk.TaskID    `json:"task_id,omitempty"`
	ContextID string        `json:"context_id,omitempty"`
	State     sdk.TaskState `json:"state,omitempty"`
	Sent      int           `json:"sent,omitempty"`
	Delivered int64         `json:"delivered,omitempty"`
	Artifacts int           `json:"artifacts,omitempty"`
}

// live reports whether the checkpoint's task may still change.
func (cp checkpoint) live() bool {
	return cp.TaskID != "" && !cp.State.Terminal() && cp.State != stateLost
}

// waitsForInput reports whether the task waits for the person: a message goes into it.
func (cp checkpoint) waitsForInput() bool {
	return cp.live() && (cp.State == sdk.TaskStateInputRequired || cp.State == sdk.TaskStateAuthRequired)
}

// stateLost marks a task the agent no longer knows (tasks/get said not found).
const stateLost sdk.TaskState = "lost"

// past is what a step needs from the conversation's log.
type past struct {
	cp checkpoint
	// users are the person's messages, oldest first, as the agent is told them.
	users []userMessage
	// question is the newest question asked after the person's last message, with its
	// resolution when there is one.
	question   *domain.Question
	resolution *domain.Resolution
}

// readPast reads the log.
func readPast(history []domain.Event) past {
	var p past
	p.cp = checkpoint{Backend: checkpointBackend, Version: 1}
	resolutions := map[int64]*domain.Resolution{}
	for _, ev := range history {
		switch ev.Kind {
		case domain.EventUserMessage:
			p.users = append(p.users, newUserMessage(ev))
			p.question = nil
		case domain.EventCheckpoint:
			var cp checkpoint
			if json.Unmarshal(ev.Checkpoint, &cp) == nil && cp.Backend == checkpointBackend {
				p.cp = cp
			}
		case domain.EventVersion:
			// A new version (a reply regenerated, a message edited) gets a task of its own
			// in the same context: the task of the version it branched from is left as it was.
			if ev.Reason != "" {
				p.cp.TaskID, p.cp.State, p.cp.Artifacts = "", "", 0
			}
		case domain.EventQuestionAsked:
			if ev.Question != nil {
				p.question = ev.Question
			}
		case domain.EventQuestionResolved:
			if ev.Resolution != nil {
				resolutions[ev.Resolution.QuestionID] = ev.Resolution
			}
		}
	}
	if p.question != nil {
		p.resolution = resolutions[p.question.ID]
	}
	return p
}

// unsent is the person's messages the agent has not accepted yet, none when there is
// nothing in them to send.
func (p past) unsent() []userMessage {
	var out []userMessage
	for _, m := range p.users[min(p.cp.Sent, len(p.users)):] {
		if !m.empty() {
			out = append(out, m)
		}
	}
	return out
}

// undelivered reports whether the newest question has a resolution the agent must hear.
func (p past) undelivered() bool {
	if p.question == nil || p.resolution == nil || p.question.ID <= p.cp.Delivered {
		return false
	}
	switch p.resolution.Outcome {
	case domain.Answered, domain.Declined, domain.Cancelled, domain.Expired:
		return true
	}
	return false
}
