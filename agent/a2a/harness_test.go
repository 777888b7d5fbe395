package a2a_test

import (
	"testing"

	"github.com/parley-chat/parley/agent"
	"github.com/parley-chat/parley/agent/agenttest"
)

// The harness lives in agenttest; these names keep the tests short.
type (
	recorder = agenttest.Recorder
	convo    = agenttest.Convo
)

func newConvo(t *testing.T, a agent.Agent) *convo {
	t.Helper()
	c := agenttest.NewConvo(t, a)
	c.RejectFormText = true
	return c
}

var form = agenttest.Form

var onlyQuestion = agenttest.OnlyQuestion
