package a2aserver_test

import (
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web/webtest"
)

// The agents the A2A clients of these tests talk to: those of web's tests of the pages and
// the JSON API.

var askerQuestion = webtest.AskerQuestion

// askerAgent says something, asks q, and once it is resolved says how.
func askerAgent(q func() domain.Question) *webtest.Scripted {
	return &webtest.Scripted{Name: "asker", OnStep: webtest.AskerStep(q)}
}

// readerAgent replies with the first line of each document attached to the person's last message.
func readerAgent() *webtest.Scripted {
	return &webtest.Scripted{Name: "reader", OnStep: webtest.ReaderStep}
}
