package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/internal/httpserve"
)

// ServePeer is `parley bench-serve`: it serves one of the peers `parley bench` measures
// Parley against, until ctx ends: "bare", a plain net/http SSE server that sends the benchmark's tokens as Parley's
// stream would, with nothing else; "model", a fake OpenAI-compatible endpoint that streams
// them as chat-completion chunks; or "agui", a fake AG-UI agent that streams them as
// TEXT_MESSAGE_CONTENT events. It prints its address on its first line.
func ServePeer(ctx context.Context, args []string, out io.Writer) error {
	if len(args) != 1 || (args[0] != "bare" && args[0] != "model" && args[0] != "agui") {
		return errors.New("usage: parley bench-serve bare|model|agui")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := http.HandlerFunc(serveBare)
	switch args[0] {
	case "model":
		h = serveModel
	case "agui":
		h = serveAGUI
	}
	fmt.Fprintln(out, l.Addr().String())
	return httpserve.Until(ctx, &http.Server{Handler: h}, l)
}

// sleepUntil waits for t, reusing one timer.
func sleepUntil(ctx context.Context, t *time.Timer, at time.Time) bool {
	wait := time.Until(at)
	if wait <= 0 {
		return true
	}
	t.Reset(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-t.C:
		return true
	}
}

// serveBare streams the plan of ?plan= as the events Parley's page gets for plain text, one
// per token, each written at once, the way Parley writes a stream: on the connection taken
// over from net/http.
func serveBare(w http.ResponseWriter, r *http.Request) {
	plan, ok := builtin.ParseBenchPlan(r.URL.Query().Get("plan"))
	if !ok {
		http.Error(w, "no plan", http.StatusBadRequest)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"); err != nil {
		return
	}
	t := time.NewTimer(time.Hour)
	buf := make([]byte, 0, 256)
	n := 0
	for i, tok := range plan.Reply() {
		if !sleepUntil(r.Context(), t, plan.At(i)) {
			return
		}
		buf = append(buf[:0], "event:datastar\n"...)
		for _, line := range strings.Split(tok, "\n") {
			buf = append(buf, "data:a "...)
			buf = append(buf, line...)
			buf = append(buf, '\n')
		}
		buf = append(buf, '\n')
		n += len(tok)
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
	fmt.Fprintf(conn, "event:datastar\ndata:e 1\ndata:n %d\n\n", n)
}

// serveModel is a fake OpenAI-compatible chat-completions endpoint: it streams the plan it
// finds in the last user message, one chunk per token.
func serveModel(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`)
		return
	}
	var req struct {
		Model    string         `json:"model"`
		Messages []benchMessage `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	plan := benchPlanOf(req.Messages)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	model, _ := json.Marshal(req.Model)
	head := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":` + string(model) + `,"choices":[{"index":0,"delta":{`
	t := time.NewTimer(time.Hour)
	buf := make([]byte, 0, 512)
	for i, tok := range plan.Reply() {
		if !sleepUntil(r.Context(), t, plan.At(i)) {
			return
		}
		buf = append(buf[:0], head...)
		if i == 0 {
			buf = append(buf, `"role":"assistant",`...)
		}
		q, _ := json.Marshal(tok)
		buf = append(buf, `"content":`...)
		buf = append(buf, q...)
		buf = append(buf, "},\"finish_reason\":null}]}\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
	io.WriteString(w, head+`},"finish_reason":"stop"}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":`+string(model)+`,"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":`+strconv.Itoa(plan.Tokens)+`,"total_tokens":`+strconv.Itoa(plan.Tokens+10)+"}}\n\ndata: [DONE]\n\n")
	rc.Flush()
}

// serveAGUI is a fake AG-UI agent: it streams the plan it finds in the last user message of
// the RunAgentInput, one TEXT_MESSAGE_CONTENT event per token.
func serveAGUI(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ThreadID string         `json:"threadId"`
		RunID    string         `json:"runId"`
		Messages []benchMessage `json:"messages"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, "POST a RunAgentInput", http.StatusBadRequest)
		return
	}
	plan := benchPlanOf(in.Messages)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	ids, _ := json.Marshal(map[string]string{"threadId": in.ThreadID, "runId": in.RunID})
	ids = ids[1 : len(ids)-1]
	io.WriteString(w, `data: {"type":"RUN_STARTED",`+string(ids)+"}\n\n"+`data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`+"\n\n")
	t := time.NewTimer(time.Hour)
	buf := make([]byte, 0, 256)
	for i, tok := range plan.Reply() {
		if !sleepUntil(r.Context(), t, plan.At(i)) {
			return
		}
		q, _ := json.Marshal(tok)
		buf = append(append(append(buf[:0], `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":`...), q...), "}\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
	io.WriteString(w, `data: {"type":"TEXT_MESSAGE_END","messageId":"m"}`+"\n\n"+`data: {"type":"RUN_FINISHED",`+string(ids)+"}\n\n")
	rc.Flush()
}

// benchMessage is a message of a request to a fake peer: a model's or an AG-UI agent's.
type benchMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// benchPlanOf finds the reply's plan in the person's messages of a request.
func benchPlanOf(messages []benchMessage) builtin.BenchPlan {
	var plan builtin.BenchPlan
	for _, m := range messages {
		var text string
		if m.Role != "user" || json.Unmarshal(m.Content, &text) != nil {
			continue
		}
		if i := strings.Index(text, "bench "); i >= 0 {
			plan, _ = builtin.ParseBenchPlan(text[i:])
		}
	}
	return plan
}
