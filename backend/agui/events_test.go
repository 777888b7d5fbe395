package agui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/internal/wire"
)

// validEvents are events of every type, as a producer following AG-UI 1.0 sends them, with
// every optional field the type has.
var validEvents = []string{
	`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant","name":"bot","timestamp":1,"metadata":{"k":null},"subagentRunId":"s1","rawEvent":{"x":1}}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`,
	`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
	`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"d","name":"n"}`,
	`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"t","parentMessageId":"m1"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
	`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
	`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"t","parentMessageId":"m1","delta":"{"}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"done","role":"tool"}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","value":"http://x/i.png"}}]}`,
	`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`,
	`{"type":"STATE_SNAPSHOT","snapshot":null}`,
	`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/b"},{"op":"move","from":"/c","path":"/d"}]}`,
	`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[]},{"id":"t1","role":"tool","content":"x","toolCallId":"c1"}]}`,
	`{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"plan","content":{"x":1},"replace":true}`,
	`{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"plan","patch":[]}`,
	`{"type":"RAW","event":{"x":1},"source":"openai"}`,
	`{"type":"CUSTOM","name":"n","value":null}`,
	`{"type":"RUN_STARTED","threadId":"t","runId":"r","parentRunId":"p","protocolVersion":"1.0"}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"ok":true},"outcome":{"type":"success","pendingToolCallIds":["c1"]}}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","message":"ok?","toolCallId":"c1","responseSchema":{"type":"object"},"expiresAt":"2030-01-01T00:00:00Z","metadata":{}}]}}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`,
	`{"type":"RUN_ERROR","message":"boom","code":"E1"}`,
	`{"type":"STEP_STARTED","stepName":"s"}`,
	`{"type":"STEP_FINISHED","stepName":"s"}`,
	`{"type":"REASONING_START","messageId":"m"}`,
	`{"type":"REASONING_MESSAGE_START","messageId":"m","role":"reasoning"}`,
	`{"type":"REASONING_MESSAGE_CONTENT","messageId":"m","delta":"d"}`,
	`{"type":"REASONING_MESSAGE_END","messageId":"m"}`,
	`{"type":"REASONING_MESSAGE_CHUNK","messageId":"m","delta":"d"}`,
	`{"type":"REASONING_END","messageId":"m"}`,
	`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m","encryptedValue":"x"}`,
	`{"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n","description":"d","parentSubagentRunId":"p","parentToolCallId":"c","parentMessageId":"m"}`,
	`{"type":"SUBAGENT_FINISHED","subagentRunId":"s","result":1,"outcome":{"type":"suspended","interruptIds":["i"]}}`,
	`{"type":"SUBAGENT_ERROR","subagentRunId":"s","message":"m","code":"c"}`,
}

// variants makes, from each valid event, the events a producer gets wrong: every field in
// turn left out, set to null and set to a value of the wrong type, and an unknown key added.
func variants(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, s := range validEvents {
		out = append(out, s)
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		with := func(k string, v any, drop bool) {
			c := map[string]any{}
			for kk, vv := range m {
				c[kk] = vv
			}
			if drop {
				delete(c, k)
			} else {
				c[k] = v
			}
			b, _ := json.Marshal(c)
			out = append(out, string(b))
		}
		for _, k := range keys {
			if k == "type" {
				continue
			}
			with(k, nil, true)
			with(k, nil, false)
			with(k, 12.5, false)
			with(k, []any{}, false)
		}
		with("unknownKey", "x", false)
	}
	out = append(out, `{"type":"NOT_A_TYPE"}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[]}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"a","value":1}]}`, `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"tool"}`)
	return out
}

// TestParseEvent_AgreesWithOfficialSchema checks Parley's validation against @ag-ui/core's
// own EventSchema, event by event: null in optional fields, unknown keys, missing ids.
func TestParseEvent_AgreesWithOfficialSchema(t *testing.T) {
	root, err := backendtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	events := variants(t)
	cmd := exec.Command("node", filepath.Join(root, "backend", "agui", "testdata", "validate.mjs"))
	cmd.Stdin = strings.NewReader(strings.Join(events, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node validate.mjs: %v\n%s", err, stderr.String())
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	i, disagree := 0, 0
	for s.Scan() {
		official := s.Text()
		_, ours := parseEvent([]byte(events[i]))
		if (official == "ok") != (ours == nil) {
			disagree++
			t.Errorf("%s\n  @ag-ui/core: %s, Parley: %v", events[i], official, ours)
		}
		i++
	}
	if i != len(events) {
		t.Fatalf("got %d answers for %d events", i, len(events))
	}
	t.Logf("%d events, %d disagreements", len(events), disagree)
}

// FuzzEventStream feeds arbitrary streams through the reader and the validation: nothing
// panics, and what passes validation has a known type and the ids its type requires.
func FuzzEventStream(f *testing.F) {
	for _, e := range validEvents {
		f.Add([]byte("data: " + e + "\n\n"))
	}
	f.Add([]byte(": comment\r\ndata: {\"type\":\"RUN_STARTED\",\r\ndata: \"threadId\":\"t\",\"runId\":\"r\"}\r\n\r\n"))
	f.Add([]byte("event: x\nid: 1\ndata: {}\n\ndata: null\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := wire.NewReader(bytes.NewReader(stream), maxEventBytes)
		for n := 0; n < 1000; n++ {
			e, err := r.Next()
			if err != nil {
				return
			}
			data := e.Data
			ev, err := parseEvent(data)
			if err != nil {
				continue
			}
			if _, ok := eventFields[ev.Type]; !ok {
				t.Fatalf("unknown type %q passed", ev.Type)
			}
			switch ev.Type {
			case "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
				if !json.Valid(data) || ev.MessageID == "" && !strings.Contains(string(data), `"messageId"`) {
					t.Fatalf("%s without messageId passed: %s", ev.Type, data)
				}
			}
		}
	})
}

// BenchmarkEventStream reads and validates a streamed reply: the per-token path of an
// AG-UI agent's text.
func BenchmarkEventStream(b *testing.B) {
	var s strings.Builder
	s.WriteString("data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
	s.WriteString("data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n\n")
	const tokens = 1000
	for range tokens {
		s.WriteString("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"word \"}\n\n")
	}
	stream := []byte(s.String())
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := wire.NewReader(bytes.NewReader(stream), maxEventBytes)
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if _, err := parseEvent(e.Data); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(tokens+2)), "ns/event")
}
