package a2a

import (
	"bytes"
	"encoding/json"
	"testing"
)

// partsReadable, the fast path, says a result is readable only when fixParts, the slow
// path that decodes it, would leave it unchanged; and it says so of the usual events.
func FuzzPartsReadable(f *testing.F) {
	usual := []string{
		`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"word "}]},"append":true}`,
		`{"kind":"status-update","status":{"state":"working","message":{"role":"agent","parts":[{"kind":"data","data":{"parts":[{"kind":"text","text":"x"}]}}]}}}`,
		`{"parts":[{"kind":"file","file":{"uri":"https://example.com/a.pdf","mimeType":"application/pdf"}},{"kind":"file","file":{"bytes":"aGk="}}]}`,
	}
	for _, s := range usual {
		f.Add([]byte(s))
		if !partsReadable([]byte(s)) {
			f.Fatalf("a usual event takes the slow path: %s", s)
		}
	}
	for _, s := range []string{
		`{"parts":[{"kind":"data","data":null}]}`, `{"parts":[{"kind":"data","data":5}]}`,
		`{"parts":[{"kind":"file","file":{"uri":"u","bytes":"b"}}]}`, `{"parts":[{"kind":"video"}]}`,
		`{"parts":[{"kind":"t\u0065xt","text":"x"}]}`, `{"parts":[1]}`, `{"a":[{"parts":[{"text":"no kind"}]}]}`,
		`{"parts":[{"kind":"data","data":{"parts":[{"kind":"nope"}]}}]}`, `{"parts":[{"kind":"text","text":7}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !partsReadable(raw) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			t.Fatalf("readable but not JSON: %s", raw)
		}
		if fixParts(v) {
			t.Fatalf("readable, but fixParts changes it: %s", raw)
		}
	})
}
