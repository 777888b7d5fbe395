package openai_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
)

// A kept-alive connection the endpoint closed while the person took their time (its
// keep-alive timeout) does not fail the next turn: the request goes again on a new one.
func TestAgent_ARequestOnAConnectionTheEndpointClosedGoesAgain(t *testing.T) {
	srv := backendtest.NewStaleServer(t, func(n int, _ *http.Request) (string, string) {
		chunk := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,"delta":{"role":"assistant","content":"reply ` +
			string(rune('A'+n)) + `"},"finish_reason":"stop"}]}`
		return "text/event-stream", "data: " + chunk + "\n\ndata: [DONE]\n\n"
	})
	c := backendtest.NewConvo(t, newAgent(t, srv.URL+"/v1"))
	if got := strings.Join(c.MustSend("one").Messages(), ""); got != "reply A" {
		t.Fatalf("first reply: %q", got)
	}
	if got := strings.Join(c.MustSend("two").Messages(), ""); got != "reply B" {
		t.Fatalf("second reply: %q", got)
	}
	if answered, reset := srv.Counts(); answered != 2 || reset != 1 {
		t.Errorf("answered %d, hung up on %d: want the second request sent again once", answered, reset)
	}
}
