package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/parley-chat/parley/domain"
)

// assertInertContext fails unless page shows one question context, and nothing in it
// carries behaviour: no data-* (Datastar runs them) or on* attribute, no image.
func assertInertContext(t *testing.T, what, page string) {
	t.Helper()
	// A stream's patches are data lines of "elements <html>".
	page = strings.ReplaceAll(page, "\nelements ", "\n")
	doc, err := html.Parse(strings.NewReader(strings.TrimPrefix(page, "elements ")))
	if err != nil {
		t.Fatal(err)
	}
	var found int
	var walk func(n *html.Node, in bool)
	walk = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "class" && strings.Contains(" "+a.Val+" ", " q-context ") {
					in = true
					found++
				}
			}
			if in {
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "data-") || strings.HasPrefix(a.Key, "on") {
						t.Errorf("%s: <%s> in the context carries %s=%q", what, n.Data, a.Key, a.Val)
					}
				}
				if n.Data == "img" || n.Data == "script" {
					t.Errorf("%s: the context holds a <%s>", what, n.Data)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, false)
	if found != 1 {
		t.Errorf("%s shows %d contexts, want 1", what, found)
	}
}

// contextAsker asks one question with the given context, and says thanks once answered.
func contextAsker(ctx any) *scripted {
	return &scripted{name: "deployer", step: func(_ context.Context, in domain.StepInput, out domain.Output) error {
		if lastResolution(in) != nil {
			return out.Text("Deploying.")
		}
		_, err := out.Ask(domain.Question{Message: "Approve deploying build 1.4.2 to production?", Context: ctx,
			Fields: []domain.Field{{Name: "note", Kind: domain.KindText}}})
		return err
	}}
}

// The person sees a question's context on the page (live and reloaded, pending and
// answered), staff in the timeline, and both exports hold it; the JSON export as the agent
// sent it.
func TestQuestionContext(t *testing.T) {
	img := `<img src=x onerror=alert(1)>`
	tests := []struct {
		name     string
		ctx      any
		wantPage []string
		wantMD   []string
	}{
		{
			name: "Text",
			ctx:  "Build 1.4.2 passed **212/212** tests.\nRollback takes about 3 minutes. " + img,
			wantPage: []string{`<div class="q-context body md"><p>Build 1.4.2 passed <strong>212/212</strong> tests.`,
				"Rollback takes about 3 minutes."},
			wantMD: []string{"Context:\n\n> Build 1.4.2 passed **212/212** tests.\n> Rollback takes about 3 minutes. " + img + "\n\nFields:\n"},
		},
		{
			name: "Object",
			ctx: map[string]any{
				"build":         "1.4.2",
				"tests":         map[string]any{"passed": json.Number("212"), "failed": 0},
				"venues":        []map[string]any{{"id": "loft", "name": "Pike Loft", "capacity": 40, "price": 1200}},
				"data-on:click": img,
			},
			wantPage: []string{`<dt>Build</dt><dd><span class="ctx-text">1.4.2</span>`, `<summary>Failed, Passed</summary>`,
				`<th scope="col">Capacity</th>`, `<span class="ctx-text">1200</span>`, `<dt>Data on:click</dt>`,
				`&lt;img src=x onerror=alert(1)&gt;`},
			wantMD: []string{"Context:\n\n- Build: 1.4.2\n- Data on:click: " + img + "\n- Tests:\n  - Failed: 0\n  - Passed: 212\n- Venues:\n\n" +
				"  | Capacity | ID | Name | Price |\n  | --- | --- | --- | --- |\n  | 40 | loft | Pike Loft | 1200 |\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, newDB(t), contextAsker(tt.ctx))
			path := ts.start(t, "deployer", "Ship it")
			id := convID(t, path)
			ts.waitState(t, id, domain.StateWaiting)

			check := func(what, page string) {
				t.Helper()
				for _, want := range tt.wantPage {
					if !strings.Contains(page, want) {
						t.Errorf("%s lacks %q", what, want)
					}
				}
				assertInertContext(t, what, page)
			}
			evs := ts.readSSE(t, path+"/stream?after=0", "", containing("q-context"))
			check("the stream", evs[len(evs)-1].data())
			_, page := ts.get(t, path)
			check("the pending card", page)

			if code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"note": {"go"}}); code != 200 {
				t.Fatalf("answer = %d %s", code, body)
			}
			ts.waitState(t, id, domain.StateDone)
			_, page = ts.get(t, path)
			check("the answered card", page)
			_, page = ts.get(t, path+"/timeline")
			check("the timeline", page)

			_, md := ts.get(t, path+"/export.md")
			for _, want := range tt.wantMD {
				if !strings.Contains(md, want) {
					t.Errorf("export.md lacks %q:\n%s", want, md)
				}
			}

			code, body := ts.get(t, path+"/export.json")
			if code != http.StatusOK {
				t.Fatalf("export.json = %d", code)
			}
			var out struct {
				Questions []struct {
					Context any `json:"context"`
				} `json:"questions"`
			}
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(tt.ctx)
			var want any
			json.Unmarshal(raw, &want)
			if len(out.Questions) != 1 || !reflect.DeepEqual(out.Questions[0].Context, want) {
				t.Errorf("export.json context = %#v, want %#v", out.Questions, want)
			}
		})
	}
}
