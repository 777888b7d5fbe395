package runner

import (
	"context"
	"time"

	"github.com/parley-chat/parley/domain"
)

// analyzerFor returns the analyzer of the named agent, nil when messages pass untouched.
func (r *Runner) analyzerFor(agentName string) domain.Analyzer {
	if a, ok := r.analyzers[agentName]; ok {
		return a
	}
	return r.analyzer
}

// intake analyzes the person's message that opened the round, once, before the agent reads
// it: the cleaned intent, the language and the user_context documents are stored as an
// intake event (see FoldIntake for how the agent gets them).
func (r *Runner) intake(ctx context.Context, conv domain.Conversation, in *domain.StepInput) error {
	in.Language = conv.Language
	in.Documents = conversationDocuments{r.ledger, conv.ID}
	az := r.analyzerFor(conv.Agent)
	msg := -1
	for i, ev := range in.History {
		switch ev.Kind {
		case domain.EventUserMessage:
			msg = i
		case domain.EventIntake:
			if msg >= 0 && ev.Intake != nil && ev.Intake.MessageEventID == in.History[msg].ID {
				msg = -1 // analyzed already (a retry, a resume)
			}
		}
	}
	if az == nil || msg < 0 || in.History[msg].RunID != in.RunID {
		return nil
	}
	raw := in.History[msg].Text
	start := time.Now()
	a, err := az.Analyze(ctx, raw)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.log.Warn("intake failed, the message passes whole", "conversation", conv.ID, "error", err)
		a = domain.Analysis{Intent: raw, Via: "fallback"}
	}
	ev, err := r.ledger.RecordIntake(context.WithoutCancel(ctx), in.RunID, in.History[msg].ID, a)
	if err != nil {
		return err
	}
	out := 0
	for _, it := range a.Items {
		out += len(it.Content)
	}
	r.log.Info("intake", "conversation", conv.ID, "via", a.Via, "input_bytes", len(raw), "intent_bytes", len(a.Intent),
		"document_bytes", out, "documents", len(a.Items), "tokens", a.Tokens, "threshold", a.Threshold,
		"language", a.Language, "took", time.Since(start).Round(time.Microsecond))
	in.History = append(in.History, ev)
	if a.Language != "" {
		in.Language = a.Language
	}
	return nil
}

// conversationDocuments reads the documents of one conversation.
type conversationDocuments struct {
	ledger domain.Ledger
	id     int64
}

func (d conversationDocuments) Document(ctx context.Context, id int64) (domain.Document, error) {
	return d.ledger.Document(ctx, d.id, id)
}
