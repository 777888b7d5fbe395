package a2a_test

import (
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
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
	c.RejectFormText = true
	return c
}

var form = backendtest.Form

var onlyQuestion = backendtest.OnlyQuestion
