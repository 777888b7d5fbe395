package openai

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/agent"
)

// question turns one tool call into the question to ask, or says what the model must fix.
func (a *Agent) question(c toolCall, t turn) (agent.Question, error) {
	if c.Name != toolName || !a.cfg.AllowQuestions {
		switch names := a.toolNames(t); len(names) {
		case 0:
			return agent.Question{}, fmt.Errorf("there is no tool %q; you have no tools here, answer in text", c.Name)
		case 1:
			return agent.Question{}, fmt.Errorf("there is no tool %q; the only tool is %s", c.Name, names[0])
		default:
			return agent.Question{}, fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(names, " and "))
		}
	}
	req, err := agent.DecodeUserInputRequest(c.Arguments)
	if err != nil {
		return agent.Question{}, err
	}
	q := req.Question()
	q.Key = c.ID
	q.Asker = a.info.Title
	// The runner refuses secret fields and checks the rest; a question it would reject is
	// one the model can correct. A question of nothing but secrets is one too: asking it
	// would be declined at once, and the model would ask again.
	refused := agent.RefuseSecrets(q)
	if len(refused.Fields) == 0 && len(refused.Refused) > 0 {
		return agent.Question{}, fmt.Errorf("the question asks only for secrets, which Parley never collects by form (%s); ask for something else, or tell the person to use the service's own sign-in", refusedNames(refused.Refused))
	}
	if err := refused.Check(); err != nil {
		return agent.Question{}, fmt.Errorf("the question cannot be shown: %v", err)
	}
	return q, nil
}

func refusedNames(r []agent.RefusedField) string {
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
