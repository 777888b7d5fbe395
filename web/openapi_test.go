package web_test

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/api"
)

// openAPIDoc reads web/openapi.json, the document the server embeds.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// pointer resolves a JSON pointer ("/components/schemas/Question") in doc.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// refs calls f with every $ref in v and where it is.
func refs(v any, at string, f func(ref, at string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				f(s, at)
				continue
			}
			refs(e, at+"/"+k, f)
		}
	case []any:
		for _, e := range x {
			refs(e, at+"/[]", f)
		}
	}
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func TestOpenAPI_DocumentIsOpenAPI31AndItsRefsResolve(t *testing.T) {
	doc := openAPIDoc(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] != "Parley API" || info["version"] != "1" {
		t.Errorf("info = %v", info)
	}
	n := 0
	refs(doc, "", func(ref, at string) {
		n++
		ptr, ok := strings.CutPrefix(ref, "#")
		if !ok {
			t.Errorf("%s: $ref %q points outside the document", at, ref)
			return
		}
		if _, ok := pointer(doc, ptr); !ok {
			t.Errorf("%s: $ref %q does not resolve", at, ref)
		}
	})
	if n == 0 {
		t.Error("no $ref at all")
	}
	// Every path parameter is declared, and the document's own route needs no token.
	paths, _ := doc["paths"].(map[string]any)
	param := regexp.MustCompile(`\{(\w+)\}`)
	for path, item := range paths {
		for _, method := range httpMethods {
			op, ok := item.(map[string]any)[method].(map[string]any)
			if !ok {
				continue
			}
			declared := map[string]bool{}
			ps, _ := op["parameters"].([]any)
			for _, p := range ps {
				if r, ok := p.(map[string]any)["$ref"].(string); ok {
					p, _ = pointer(doc, strings.TrimPrefix(r, "#"))
				}
				if pm, _ := p.(map[string]any); pm["in"] == "path" {
					declared[pm["name"].(string)] = true
				}
			}
			for _, m := range param.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s %s: path parameter %s is not declared", method, path, m[1])
				}
			}
			responses, _ := op["responses"].(map[string]any)
			if _, open := op["security"]; !open && responses["401"] == nil {
				t.Errorf("%s %s needs a token but has no 401", method, path)
			}
		}
	}
	if sec, ok := pointer(doc, "/paths/~1openapi.json/get/security"); !ok || len(sec.([]any)) != 0 {
		t.Errorf("GET /openapi.json security = %v, want []", sec)
	}
}

// TestOpenAPI_DocumentsEveryRoute holds the document to the route table: every API route
// is documented, and nothing else is.
func TestOpenAPI_DocumentsEveryRoute(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	var served []string
	param := regexp.MustCompile(`:(\w+)`)
	for _, r := range ts.srv.Web.Routes() {
		method, path, _ := strings.Cut(r, " ")
		rest, ok := strings.CutPrefix(path, "/api/v1")
		if !ok || rest == "" || strings.HasSuffix(rest, "/*") {
			continue // not the API, or the group's catch-alls
		}
		served = append(served, strings.ToLower(method)+" "+param.ReplaceAllString(rest, "{$1}"))
	}
	if len(served) == 0 {
		t.Fatal("the server lists no API route")
	}
	var documented []string
	paths, _ := openAPIDoc(t)["paths"].(map[string]any)
	for path, item := range paths {
		for _, method := range httpMethods {
			if _, ok := item.(map[string]any)[method]; ok {
				documented = append(documented, method+" "+path)
			}
		}
	}
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in web/openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("web/openapi.json documents %s, which the server does not serve", d)
		}
	}
}

func TestOpenAPI_ServedWithoutAToken(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	resp, err := http.Get(ts.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/v1/openapi.json = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("served document: %v, openapi %q", err, doc.OpenAPI)
	}
}

// jsonFields adds the JSON fields a struct type encodes to out (the fields of an embedded
// struct as its own), each with whether it may be left out (omitempty).
func jsonFields(t reflect.Type, out map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			fields := f.Type
			if fields.Kind() == reflect.Pointer {
				fields = fields.Elem()
			}
			jsonFields(fields, out)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out[cmp.Or(name, f.Name)] = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
	}
}

// responseSchema is the JSON pointer of the schema of an operation's JSON answer with status.
func responseSchema(path, method, status string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	return "/paths/" + esc.Replace(path) + "/" + method + "/responses/" + status + "/content/application~1json/schema"
}

// TestOpenAPI_SchemasAreTheWireTypes holds the document to package api, which the server
// encodes and decodes and parley chat decodes and encodes: each schema has exactly the
// fields of its type; the schema of what the server writes requires every field the type
// always writes, and the schema of a request requires only fields the type always writes.
// A schema is named by its name in components/schemas, or by its JSON pointer when it is
// written out where it is used (the envelopes of answers).
func TestOpenAPI_SchemasAreTheWireTypes(t *testing.T) {
	doc := openAPIDoc(t)
	written := map[string]any{
		"Agent": api.Agent{}, "Conversation": api.Conversation{}, "Message": api.Message{}, "Queued": api.Queued{},
		"Question": api.Question{}, "ConversationState": api.ConversationState{}, "Version": api.Version{},
		"Choice": api.Choice{}, "Versions": api.Versions{}, "ErrorResponse": api.Error{}, "Error": api.ErrorBody{},
		"MessageDelta": api.Delta{}, "VersionEvent": api.VersionEvent{}, "QueuedEvent": api.QueuedEvent{},
		"UnqueuedEvent": api.UnqueuedEvent{}, "PlanEvent": api.PlanEvent{}, "QuestionAsked": api.AskedEvent{},
		"QuestionResolved": api.ResolvedEvent{}, "RunState": api.RunStateEvent{}, "ToolCallEvent": api.ToolEvent{},
		"ConversationDeleted": api.DeletedEvent{}, "Me": api.Me{}, "Feedback": api.Feedback{},
		responseSchema("/agents", "get", "200"):                                    api.AgentList{},
		responseSchema("/conversations", "get", "200"):                             api.ConversationList{},
		responseSchema("/conversations", "post", "201"):                            api.ConversationCreated{},
		responseSchema("/conversations/{id}/messages", "post", "202"):              api.MessageSent{},
		responseSchema("/conversations/{id}/regenerate", "post", "202"):            api.VersionStarted{},
		responseSchema("/conversations/{id}/messages/{event}/edit", "post", "202"): api.VersionStarted{},
		responseSchema("/questions", "get", "200"):                                 api.QuestionList{},
	}
	read := map[string]any{
		"NewConversation": api.NewConversation{}, "NewMessage": api.NewMessage{}, "EditMessage": api.EditMessage{},
		"Regenerate": api.Regenerate{}, "Answer": api.Answer{}, "Decline": api.Decline{}, "FeedbackRequest": api.FeedbackRequest{},
	}
	for _, table := range []map[string]any{written, read} {
		for schema, v := range table {
			ptr := schema
			if !strings.HasPrefix(ptr, "/") {
				ptr = "/components/schemas/" + schema
			}
			node, ok := pointer(doc, ptr)
			s, _ := node.(map[string]any)
			if !ok || s == nil {
				t.Errorf("no schema %s for %T", schema, v)
				continue
			}
			properties, _ := s["properties"].(map[string]any)
			var required []string
			rs, _ := s["required"].([]any)
			for _, r := range rs {
				required = append(required, r.(string))
			}
			fields := map[string]bool{}
			jsonFields(reflect.TypeOf(v), fields)
			_, isRead := read[schema]
			for name, optional := range fields {
				if _, ok := properties[name]; !ok {
					t.Errorf("%s lacks %q, which %T has", schema, name, v)
				} else if !isRead && !optional && !slices.Contains(required, name) {
					t.Errorf("%s does not require %q, which %T always writes", schema, name, v)
				}
			}
			for name := range properties {
				if _, ok := fields[name]; !ok {
					t.Errorf("%s has %q, which %T does not have", schema, name, v)
				}
			}
			for _, name := range required {
				if _, ok := properties[name]; !ok {
					t.Errorf("%s requires %q, which it does not describe", schema, name)
				} else if isRead && fields[name] {
					t.Errorf("%s requires %q, which %T may leave out", schema, name, v)
				}
			}
		}
	}
}
