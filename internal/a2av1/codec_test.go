package a2av1

import (
	"encoding/json"
	"reflect"
	"testing"
)

func parse(t *testing.T, s string) obj {
	t.Helper()
	var o obj
	if err := decode([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestStreamEventsBothWays(t *testing.T) {
	for _, tt := range []struct{ name, v03, v1 string }{
		{"task", `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"input-required","message":{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"Name?"}]}},"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}}]}]}`,
			`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"Name?"}]}},"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain","filename":"a.txt"}]}]}}`},
		{"status", `{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working"}}`,
			`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`},
		{"artifact", `{"kind":"artifact-update","taskId":"t1","contextId":"c1","append":true,"lastChunk":true,"artifact":{"artifactId":"a1","name":"partial_result","parts":[{"kind":"data","data":{"x":1}},{"kind":"file","file":{"uri":"https://example.com/a.pdf"}}]}}`,
			`{"artifactUpdate":{"taskId":"t1","contextId":"c1","append":true,"lastChunk":true,"artifact":{"artifactId":"a1","name":"partial_result","parts":[{"data":{"x":1}},{"url":"https://example.com/a.pdf"}]}}}`},
		{"message", `{"kind":"message","messageId":"m3","role":"agent","parts":[{"kind":"text","text":"Hi","metadata":{"k":"v"}}]}`,
			`{"message":{"messageId":"m3","role":"ROLE_AGENT","parts":[{"text":"Hi","metadata":{"k":"v"}}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := ResultToV1("message/stream", parse(t, tt.v03)), parse(t, tt.v1); !reflect.DeepEqual(got, want) {
				t.Errorf("to v1.0:\n got %s\nwant %s", js(got), js(want))
			}
			if got, want := ResultToV03("SendStreamingMessage", parse(t, tt.v1)), parse(t, tt.v03); !reflect.DeepEqual(got, want) {
				t.Errorf("to v0.3:\n got %s\nwant %s", js(got), js(want))
			}
		})
	}
}

func TestFinalComesFromTheState(t *testing.T) {
	for state, final := range map[string]bool{"TASK_STATE_WORKING": false, "TASK_STATE_INPUT_REQUIRED": true, "TASK_STATE_COMPLETED": true, "TASK_STATE_AUTH_REQUIRED": true} {
		got := ResultToV03("SubscribeToTask", parse(t, `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"`+state+`"}}}`)).(obj)
		if got["final"] != final {
			t.Errorf("%s: final = %v, want %v", state, got["final"], final)
		}
	}
}

func TestDataThatIsNotAnObject(t *testing.T) {
	v03 := ResultToV03("SendStreamingMessage", parse(t, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":[1,2]}]}}`))
	back := ResultToV1("message/stream", v03)
	if want := parse(t, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":[1,2]}]}}`); !reflect.DeepEqual(back, want) {
		t.Errorf("a list in a DataPart: got %s", js(back))
	}
}

func TestParamsAndErrors(t *testing.T) {
	p := ParamsToV1("message/send", parse(t, `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]},"configuration":{"blocking":false}}`))
	if want := parse(t, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"returnImmediately":true}}`); !reflect.DeepEqual(p, want) {
		t.Errorf("params to v1.0: %s", js(p))
	}
	if back := ParamsToV03("SendMessage", p); !reflect.DeepEqual(back, parse(t, `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]},"configuration":{"blocking":false}}`)) {
		t.Errorf("params back to v0.3: %s", js(back))
	}
	e := ErrorToV1(parse(t, `{"code":-32001,"message":"Task not found","data":{"error":"no task t9"}}`))
	if want := parse(t, `{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"TASK_NOT_FOUND","metadata":{"error":"no task t9"}}]}`); !reflect.DeepEqual(e, want) {
		t.Errorf("error to v1.0: %s", js(e))
	}
	if back := ErrorToV03(e); back["data"].(obj)["error"] != "no task t9" {
		t.Errorf("error back to v0.3 keeps its detail: %s", js(back))
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
