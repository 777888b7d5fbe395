package openai

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// question turns one tool call into the question to ask, or says what the model must fix.
func (a *Agent) question(c toolCall, t turn) (domain.Question, error) {
	if c.Name != toolName || !a.cfg.AllowQuestions {
		switch names := a.toolNames(t); len(names) {
		case 0:
			return domain.Question{}, fmt.Errorf("there is no tool %q; you have no tools here, answer in text", c.Name)
		case 1:
			return domain.Question{}, fmt.Errorf("there is no tool %q; the only tool is %s", c.Name, names[0])
		default:
			return domain.Question{}, fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(names, " and "))
		}
	}
	req, err := domain.DecodeUserInputRequest(c.Arguments)
	if err != nil {
		return domain.Question{}, err
	}
	q := req.Question()
	q.Key = c.ID
	q.Asker = a.info.Title
	// The runner refuses secret fields and checks the rest; a question it would reject is
	// one the model can correct. A question of nothing but secrets is one too: asking it
	// would be declined at once, and the model would ask again.
	refused := domain.RefuseSecrets(q)
	if len(refused.Fields) == 0 && len(refused.Refused) > 0 {
		return domain.Question{}, fmt.Errorf("the question asks only for secrets, which Parley never collects by form (%s); ask for something else, or tell the person to use the service's own sign-in", refusedNames(refused.Refused))
	}
	if err := refused.Check(); err != nil {
		return domain.Question{}, fmt.Errorf("the question cannot be shown: %v", err)
	}
	return q, nil
}

func refusedNames(r []domain.RefusedField) string {
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
