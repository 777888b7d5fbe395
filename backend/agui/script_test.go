package agui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/agui"
	"github.com/parley-chat/parley/backend/backendtest"
)

// scripted serves each run the next script of raw SSE lines, in order; bodies gets the
// inputs.
func scripted(t *testing.T, scripts ...[]string) string {
	url, _ := scriptedWithInputs(t, scripts...)
	return url
}

func scriptedWithInputs(t *testing.T, scripts ...[]string) (string, *[]string) {
	t.Helper()
	n := 0
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if n >= len(scripts) {
			t.Errorf("run %d has no script", n+1)
			return
		}
		script := scripts[n]
		n++
		w.Header().Set("Content-Type", "text/event-stream")
		for _, line := range script {
			if d, ok := strings.CutPrefix(line, "sleep "); ok {
				w.(http.Flusher).Flush()
				ms, _ := time.ParseDuration(d)
				time.Sleep(ms)
				continue
			}
			fmt.Fprint(w, line+"\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/agent", &bodies
}

const started = `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}`
const finished = `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}`

func TestAgent_ChunksAroundPassThroughEvents(t *testing.T) {
	url := scripted(t, []string{started,
		`data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hello "}`,
		`data: {"type":"RAW","event":{"x":1}}`,
		`data: {"type":"TEXT_MESSAGE_CHUNK","delta":"world"}`,
		`data: {"type":"TOOL_CALL_CHUNK","toolCallId":"a","toolCallName":"search","delta":"{\"q\":"}`,
		`data: {"type":"TOOL_CALL_CHUNK","delta":"1}"}`,
		`data: {"type":"TOOL_CALL_CHUNK","toolCallId":"b","toolCallName":"fetch","delta":"{}"}`,
		`data: {"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"a","content":"found"}`,
		finished})
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: url})
	c := backendtest.NewConvo(t, a)
	rec := c.MustSend("hi")
	if got := joined(rec); got != "Hello world" {
		t.Errorf("message: %q", got)
	}
	cards := toolCards(c.History)
	if len(cards) != 2 || string(cards[0].Arguments) != `{"q":1}` || cards[0].Result != "found" || !cards[1].Status.Ended() {
		t.Errorf("cards: %+v", cards)
	}
}

func TestAgent_RequestUserInputWithoutAnOutcome(t *testing.T) {
	url := scripted(t, []string{started,
		`data: {"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"request_user_input"}`,
		`data: {"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"prompt\":\"Which city?\",\"request_type\":\"clarification\"}"}`,
		`data: {"type":"TOOL_CALL_END","toolCallId":"c1"}`,
		finished})
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: url})
	q := backendtest.OnlyQuestion(t, backendtest.NewConvo(t, a).MustSend("hi"))
	if q.Message != "Which city?" || q.Key != "c1" {
		t.Errorf("question: %+v", q)
	}
}

func TestAgent_StallsBeforeHeadersAndKeepAlives(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer silent.Close()
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: silent.URL, IdleTimeout: 300 * time.Millisecond})
	if _, err := backendtest.NewConvo(t, a).Send("hi"); err == nil || !strings.Contains(err.Error(), "did not answer for 300ms") {
		t.Fatalf("error: %v", err)
	}
	// Comments while the agent thinks keep the run alive.
	url := scripted(t, []string{started, ": ping", "sleep 200ms", ": ping", "sleep 200ms", ": ping", "sleep 200ms",
		`data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"done"}`, finished})
	a, _ = agui.New(context.Background(), agui.Config{Name: "x", URL: url, IdleTimeout: 350 * time.Millisecond})
	if got := joined(backendtest.NewConvo(t, a).MustSend("hi")); got != "done" {
		t.Fatalf("reply: %q", got)
	}
}

func TestAgent_ARefusedResumeDoesNotHoldTheThread(t *testing.T) {
	interrupt := `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"input_required","responseSchema":{"type":"object","properties":{"year":{"type":"integer"}},"required":["year"]}}]}}`
	url, bodies := scriptedWithInputs(t,
		[]string{started, interrupt},
		[]string{started, `data: {"type":"RUN_ERROR","message":"payload does not match"}`},
		[]string{started, `data: {"type":"RUN_ERROR","message":"payload does not match"}`},
		[]string{started, `data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"ok"}`, finished})
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: url})
	c := backendtest.NewConvo(t, a)
	q := backendtest.OnlyQuestion(t, c.MustSend("hi"))
	c.Answer(q, backendtest.Form("year", "1999"))
	if _, err := c.Resume(); err == nil {
		t.Fatal("want the agent's error")
	}
	if _, err := c.Retry(); err == nil {
		t.Fatal("want the agent's error again: Retry replays the resume")
	}
	if got := joined(c.MustSend("let us start over")); got != "ok" {
		t.Fatalf("reply: %q", got)
	}
	sent := *bodies
	if !strings.Contains(sent[2], `"resume":[{"interruptId":"i1","status":"resolved","payload":{"year":1999}}]`) {
		t.Errorf("the retry did not replay the resume: %s", sent[2])
	}
	if !strings.Contains(sent[3], `"resume":[{"interruptId":"i1","status":"cancelled","payload":{"reason":"The person sent a new message instead."}}]`) {
		t.Errorf("the new message did not cancel the interrupt: %s", sent[3])
	}
}

func TestAgent_InterleavedMessagesStayWhole(t *testing.T) {
	url := scripted(t, []string{started,
		`data: {"type":"TEXT_MESSAGE_START","messageId":"a"}`,
		`data: {"type":"TEXT_MESSAGE_START","messageId":"b"}`,
		`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"a1 "}`,
		`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"b","delta":"b1 "}`,
		`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"a2"}`,
		`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"b","delta":"b2"}`,
		`data: {"type":"TEXT_MESSAGE_END","messageId":"b"}`,
		`data: {"type":"TEXT_MESSAGE_START","messageId":"c"}`,
		`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"c","delta":"c1"}`,
		`data: {"type":"TEXT_MESSAGE_END","messageId":"a"}`,
		finished})
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: url})
	rec := backendtest.NewConvo(t, a).MustSend("hi")
	if got := strings.Join(rec.Messages(), "|"); got != "a1 a2|b1 b2|c1" {
		t.Errorf("messages: %q", got)
	}
}

// A kept-alive connection the agent closed while a question waited (its keep-alive timeout)
// does not fail the next run: the request goes again on a new connection.
func TestAgent_ARunOnAConnectionTheAgentClosedGoesAgain(t *testing.T) {
	runs := 0
	srv := backendtest.NewStaleServer(t, func(_ int, r *http.Request) (string, string) {
		if r.Method == http.MethodGet {
			return "application/json", "{}" // the capabilities
		}
		runs++
		return "text/event-stream", strings.Join([]string{started,
			fmt.Sprintf(`data: {"type":"TEXT_MESSAGE_CHUNK","messageId":"m%d","delta":"run %d"}`, runs, runs), finished}, "\n\n") + "\n\n"
	})
	a, _ := agui.New(context.Background(), agui.Config{Name: "x", URL: srv.URL + "/agent"})
	c := backendtest.NewConvo(t, a)
	if got := joined(c.MustSend("one")); got != "run 1" {
		t.Fatalf("first run: %q", got)
	}
	if got := joined(c.MustSend("two")); got != "run 2" {
		t.Fatalf("second run: %q", got)
	}
	if _, reset := srv.Counts(); reset == 0 {
		t.Errorf("no request went out on a kept-alive connection: the test tests nothing")
	}
}
