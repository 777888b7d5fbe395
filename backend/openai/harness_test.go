package openai_test

import (
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// The harness lives in backendtest; these names keep the tests short.
type (
	recorder = backendtest.Recorder
	convo    = backendtest.Convo
)

func newConvo(t *testing.T, a domain.Agent) *convo {
	t.Helper()
	c := backendtest.NewConvo(t, a)
	c.RejectFormText = false
	return c
}

var form = backendtest.Form

// newAgent returns an agent against base with the given changes to a test config.
func newAgent(t *testing.T, base string, change ...func(*openai.Config)) *openai.Agent {
	t.Helper()
	cfg := openai.Config{
		Name: "helper", Title: "Model helper", BaseURL: base, Model: "fake-model",
		SystemPrompt: "You are a careful helper.", AllowQuestions: true,
	}
	for _, f := range change {
		f(&cfg)
	}
	a, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// roles lists the roles of a request's messages.
func roles(req sentRequest) []string {
	out := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = m.Role
	}
	return out
}
