package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/parley-chat/parley/backend/openai"
	"github.com/parley-chat/parley/domain"
)

// fakeModel is an OpenAI-compatible endpoint: it streams a request_user_input tool call when the
// conversation ends with the person's message, and a text answer after the tool result. It can
// be told to fail the next request.
type fakeModel struct {
	mu       sync.Mutex
	failNext bool
	bodies   []map[string]any
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	fail := f.failNext
	f.failNext = false
	f.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":{"message":"the model is overloaded","type":"server_error"}}`)
		return
	}
	msgs := body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		j, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", j)
		w.(http.Flusher).Flush()
	}
	if last["role"] == "tool" {
		var result map[string]any
		json.Unmarshal([]byte(last["content"].(string)), &result)
		values, _ := result["values"].(map[string]any)
		for _, piece := range []string{"Deploying ", "to ", fmt.Sprint(values["choice"]), "."} {
			send(map[string]any{"content": piece}, nil)
		}
		send(map[string]any{}, "stop")
	} else {
		args := `{"prompt":"Which environment?","request_type":"selection","context":{"options":["staging","production"]}}`
		send(map[string]any{"role": "assistant", "content": "Let me check. "}, nil)
		for i, piece := range []string{args[:30], args[30:]} {
			call := map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}
			if i == 0 {
				call["id"], call["type"] = "call_abc", "function"
				call["function"].(map[string]any)["name"] = "request_user_input"
			}
			send(map[string]any{"tool_calls": []any{call}}, nil)
		}
		send(map[string]any{}, "tool_calls")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func TestOpenAIAgent_AsksThroughAFormAndGetsTheToolResult(t *testing.T) {
	model := &fakeModel{}
	ms := httptest.NewServer(model)
	defer ms.Close()
	a, err := openai.New(openai.Config{Name: "gpt", Title: "Model", BaseURL: ms.URL + "/v1", Model: "fake", AllowQuestions: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, newDB(t), a)

	model.failNext = true
	path := ts.start(t, "gpt", "Deploy the app")
	id := convID(t, path)
	ts.waitState(t, id, domain.StateFailed)
	_, page := ts.get(t, path)
	if !strings.Contains(page, "the model is overloaded") || !strings.Contains(page, ">Retry</button>") {
		t.Fatal("a model error must show in the conversation with Retry")
	}
	ts.post(t, path+"/retry", nil)
	ts.waitState(t, id, domain.StateWaiting)

	_, page = ts.get(t, path)
	if !strings.Contains(page, `<option value="production">`) || !strings.Contains(page, "Which environment?") {
		t.Fatal("the tool call did not become a selection form")
	}
	if code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"choice": {"production"}}); code != 200 || !strings.Contains(body, "Answered") {
		t.Fatalf("answer = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	_, page = ts.get(t, path)
	if !strings.Contains(page, "Deploying to production.") || strings.Count(page, `class="msg user"`) != 1 || strings.Count(page, "Let me check.") != 1 {
		t.Fatalf("final answer missing or a message doubled")
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	last := model.bodies[len(model.bodies)-1]["messages"].([]any)
	call, tool := last[len(last)-2].(map[string]any), last[len(last)-1].(map[string]any)
	calls, _ := call["tool_calls"].([]any)
	if len(calls) != 1 || tool["role"] != "tool" || tool["tool_call_id"] != "call_abc" || !strings.Contains(tool["content"].(string), `"production"`) {
		t.Fatalf("the model did not get the answer as the tool result: %v / %v", call, tool)
	}
}
