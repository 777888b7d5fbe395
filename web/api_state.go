package web

import (
	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// apiConversation is conv as the API shows it.
func (s *Server) apiConversation(conv domain.Conversation) api.Conversation {
	state := string(conv.State)
	if state == "" {
		state = "new"
	}
	return api.Conversation{ID: conv.ID, Title: conv.Title, Kind: string(conv.Kind), Agent: conv.Agent, AgentTitle: s.conversationAgent(conv), Owner: conv.Owner,
		State: state, CreatedAt: conv.CreatedAt, UpdatedAt: conv.UpdatedAt, Archived: !conv.Archived.IsZero(), URL: conversationURL(conv.ID), Version: conv.Version}
}

// apiState reads a conversation's log into what a client shows: its messages, its
// questions and how each was resolved, its plan as it stands.
func (s *Server) apiState(conv domain.Conversation, events []domain.Event) api.ConversationState {
	out := api.ConversationState{Conversation: s.apiConversation(conv), Messages: []api.Message{}, Questions: []api.Question{}}
	var asked []domain.QuestionRecord
	at := map[int64]int{}
	for _, ev := range events {
		out.LastEventID = ev.ID
		switch ev.Kind {
		case domain.EventUserMessage, domain.EventAgentMessage:
			out.Messages = append(out.Messages, api.MessageOf(ev))
		case domain.EventPlan:
			out.Plan = ev.Plan
		case domain.EventQuestionAsked:
			at[ev.Question.ID] = len(asked)
			asked = append(asked, ev.AskedRecord())
		case domain.EventQuestionResolved:
			if i, ok := at[ev.Resolution.QuestionID]; ok {
				r := *ev.Resolution
				asked[i].Resolution = &r
			}
		}
	}
	for _, rec := range asked {
		out.Questions = append(out.Questions, api.QuestionOf(rec))
	}
	return out
}
