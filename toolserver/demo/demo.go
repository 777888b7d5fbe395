// Package demo is a small MCP tool server built with the official Go SDK, served by
// `parley mcp-demo` over stdio or Streamable HTTP. Its tools show what Parley does with a
// tool server: a form of every field kind, two questions in one call, a page to open (as an
// input request and as a URLElicitationRequired error), progress, a tool that needs
// approval, one that asks for a secret, and one that crashes. The tests run it as a real
// server. It keeps nothing between the rounds of a call but what it sends as request state,
// so a question survives a restart of Parley and of the server.
package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a demo server.
type Options struct {
	// Step is the pause between two progress steps of count_slowly (default 200 ms).
	Step time.Duration
}

// Server is the demo server and the state of its pages.
type Server struct {
	*sdk.Server
	opts Options

	mu        sync.Mutex
	pages     string                        // the pages' base URL
	done      map[string]bool               // elicitation ids completed at a page
	sessions  map[string]*sdk.ServerSession // who to tell when one completes
	connected bool                          // the calendar of sync_calendar
}

// tinyPNG is a 1×1 PNG for lookup's image result.
var tinyPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

// New returns the demo server.
func New(opts Options) *Server {
	if opts.Step <= 0 {
		opts.Step = 200 * time.Millisecond
	}
	s := &Server{opts: opts, done: map[string]bool{}, sessions: map[string]*sdk.ServerSession{}}
	s.Server = sdk.NewServer(&sdk.Implementation{Name: "parley-demo", Title: "Parley demo tools", Version: "1"}, nil)
	add := func(t *sdk.Tool, h sdk.ToolHandler) {
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		s.AddTool(t, h)
	}
	add(&sdk.Tool{Name: "lookup", Description: "Look up a word in the demo dictionary. Read-only.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"}}},
		s.lookup)
	add(&sdk.Tool{Name: "book_table", Description: "Book a table at a restaurant. Asks the person for the details.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"restaurant": map[string]any{"type": "string"}}}},
		s.bookTable)
	add(&sdk.Tool{Name: "deploy", Description: "Deploy a service. Asks for the environment, then for the version.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"service": map[string]any{"type": "string"}}, "required": []string{"service"}}},
		s.deploy)
	add(&sdk.Tool{Name: "connect_account", Description: "Connect the person's calendar account: they sign in on a page of its own."}, s.connectAccount)
	add(&sdk.Tool{Name: "sync_calendar", Description: "Sync the calendar. Needs a connected account."}, s.syncCalendar)
	add(&sdk.Tool{Name: "count_slowly", Description: "Count to n slowly, reporting progress.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1, "maximum": 100}}, "required": []string{"n"}}},
		s.countSlowly)
	add(&sdk.Tool{Name: "delete_branch", Description: "Delete a git branch.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"branch": map[string]any{"type": "string", "minLength": 1},
			"force":  map[string]any{"type": "boolean"}}, "required": []string{"branch"}}},
		s.deleteBranch)
	add(&sdk.Tool{Name: "ask_secret", Description: "Asks the person for an API key (Parley declines)."}, s.askSecret)
	add(&sdk.Tool{Name: "crash", Description: "Ends the server's process in the middle of the call."}, s.crash)
	return s
}

func args(req *sdk.CallToolRequest) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

func text(format string, a ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

func (s *Server) lookup(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	word, _ := args(req)["word"].(string)
	return &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: fmt.Sprintf("%s: a word of %d letters.", word, len(word))},
		&sdk.ImageContent{Data: tinyPNG, MIMEType: "image/png"},
		&sdk.ResourceLink{URI: "https://example.com/dictionary/" + word, Name: "dictionary entry", MIMEType: "text/html"},
	}}, nil
}

// bookingSchema asks for every kind of field the protocol has.
var bookingSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"date":       map[string]any{"type": "string", "format": "date", "title": "Date"},
		"arrival":    map[string]any{"type": "string", "format": "date-time", "title": "Arrival time"},
		"party_size": map[string]any{"type": "integer", "title": "Party size", "minimum": 1, "maximum": 12, "default": 2},
		"budget":     map[string]any{"type": "number", "title": "Budget per person (EUR)", "minimum": 0, "maximum": 500},
		"seating": map[string]any{"type": "string", "title": "Seating", "enum": []string{"inside", "terrace"},
			"enumNames": []string{"Inside", "On the terrace"}},
		"cuisine": map[string]any{"type": "string", "title": "Cuisine", "oneOf": []any{
			map[string]any{"const": "it", "title": "Italian"}, map[string]any{"const": "jp", "title": "Japanese"}}},
		"diets": map[string]any{"type": "array", "title": "Dietary needs", "minItems": 0, "maxItems": 2,
			"items": map[string]any{"type": "string", "enum": []string{"vegetarian", "vegan", "gluten-free"}}},
		"name":       map[string]any{"type": "string", "title": "Name for the booking", "minLength": 2, "maxLength": 40},
		"notes":      map[string]any{"type": "string", "title": "Notes for the restaurant", "maxLength": 1000},
		"menu_url":   map[string]any{"type": "string", "format": "uri", "title": "Menu you liked"},
		"high_chair": map[string]any{"type": "boolean", "title": "High chair needed", "default": false},
	},
	"required": []string{"name", "date", "party_size", "seating"},
}

func (s *Server) bookTable(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	r, ok := req.Params.InputResponses["details"].(*sdk.ElicitResult)
	if !ok {
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"details": &sdk.ElicitParams{Mode: "form",
			Message: "Which table should I book?", RequestedSchema: bookingSchema}}, RequestState: "booking"}, nil
	}
	if r.Action != "accept" {
		return text("No table booked: the person chose %s.", r.Action), nil
	}
	keys := make([]string, 0, len(r.Content))
	for k := range r.Content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, r.Content[k])
	}
	return text("Booked: %s.", strings.Join(parts, ", ")), nil
}

// deploy asks twice in one call; the first answer travels in the request state.
func (s *Server) deploy(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	service, _ := args(req)["service"].(string)
	state := req.Params.RequestState
	if r, ok := req.Params.InputResponses["environment"].(*sdk.ElicitResult); ok {
		if r.Action != "accept" {
			return text("Not deployed: the person chose %s.", r.Action), nil
		}
		env, _ := r.Content["environment"].(string)
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"version": &sdk.ElicitParams{Mode: "form",
			Message: fmt.Sprintf("Which version of %s goes to %s?", service, env),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"version": map[string]any{"type": "string", "title": "Version", "enum": []string{"1.4.1", "1.4.2"}}},
				"required": []string{"version"}}}}, RequestState: "env=" + env}, nil
	}
	if r, ok := req.Params.InputResponses["version"].(*sdk.ElicitResult); ok {
		env, found := strings.CutPrefix(state, "env=")
		if !found {
			return nil, errors.New("deploy: the request state is missing")
		}
		if r.Action != "accept" {
			return text("Not deployed: the person chose %s.", r.Action), nil
		}
		return text("Deployed %s %v to %s.", service, r.Content["version"], env), nil
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"environment": &sdk.ElicitParams{Mode: "form",
		Message: fmt.Sprintf("Where should %s go?", service),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"environment": map[string]any{"type": "string", "title": "Environment", "oneOf": []any{
				map[string]any{"const": "staging", "title": "Staging"}, map[string]any{"const": "production", "title": "Production"}}}},
			"required": []string{"environment"}}}}}, nil
}

// pageURL is the page of an elicitation, or "" when the server has no pages.
func (s *Server) pageURL(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pages == "" {
		return ""
	}
	return s.pages + "/connect?id=" + id
}

func (s *Server) remember(id string, ss *sdk.ServerSession) {
	s.mu.Lock()
	s.sessions[id] = ss
	s.mu.Unlock()
}

func (s *Server) connectAccount(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	if r, ok := req.Params.InputResponses["signin"].(*sdk.ElicitResult); ok {
		id := req.Params.RequestState
		s.mu.Lock()
		done := s.done[id]
		s.mu.Unlock()
		switch {
		case r.Action != "accept":
			return text("Not connected: the person chose %s.", r.Action), nil
		case !done:
			return text("Not connected yet: the sign-in page was not finished."), nil
		}
		return text("Calendar connected."), nil
	}
	id := fmt.Sprintf("signin-%d", time.Now().UnixNano())
	s.remember(id, req.Session)
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"signin": &sdk.ElicitParams{Mode: "url", ElicitationID: id,
		URL: s.pageURL(id), Message: "Sign in to the demo calendar to connect it."}}, RequestState: id}, nil
}

func (s *Server) syncCalendar(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	s.mu.Lock()
	connected := s.connected
	s.mu.Unlock()
	if connected {
		return text("Synced 3 events."), nil
	}
	id := fmt.Sprintf("calendar-%d", time.Now().UnixNano())
	s.remember(id, req.Session)
	return nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{{Mode: "url", ElicitationID: id, URL: s.pageURL(id),
		Message: "Authorize the demo calendar first."}})
}

func (s *Server) countSlowly(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	n, _ := args(req)["n"].(float64)
	token := req.Params.GetProgressToken()
	for i := 1; i <= int(n); i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.opts.Step):
		}
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: n,
				Message: fmt.Sprintf("counted %d of %d", i, int(n))})
		}
	}
	return text("Counted to %d.", int(n)), nil
}

func (s *Server) deleteBranch(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	a := args(req)
	return text("Deleted branch %v (force=%v).", a["branch"], a["force"] == true), nil
}

func (s *Server) askSecret(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	if r, ok := req.Params.InputResponses["key"].(*sdk.ElicitResult); ok {
		return text("The person's client answered %s.", r.Action), nil
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"key": &sdk.ElicitParams{Mode: "form", Message: "Paste your API key.",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"api_key": map[string]any{"type": "string"}}}}}}, nil
}

func (s *Server) crash(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	fmt.Fprintln(os.Stderr, "demo: crashing on purpose")
	os.Exit(3)
	return nil, nil
}

// Pages serves the pages the person opens: visiting one finishes its sign-in, and the
// server tells the client that the interaction is complete.
func (s *Server) Pages() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		s.mu.Lock()
		ss := s.sessions[id]
		s.done[id] = true
		if strings.HasPrefix(id, "calendar-") {
			s.connected = true
		}
		s.mu.Unlock()
		if ss != nil {
			_ = ss.NotifyElicitationComplete(r.Context(), &sdk.ElicitationCompleteParams{ElicitationID: id})
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Signed in</title><p>Signed in to the demo calendar. You can close this page.</p>")
	})
}

// Handler serves the demo over Streamable HTTP at /mcp, and its pages at /connect; set
// the pages' base URL with SetPages. The handler is stateless: that is how the SDK serves
// protocol 2026-07-28 over HTTP, whose round trip lets a question outlive a restart.
func (s *Server) Handler() http.Handler {
	return s.handler(&sdk.StreamableHTTPOptions{Stateless: true})
}

// StatefulHandler is Handler with a stateful MCP endpoint: it speaks MCP 2025-11-25, so the
// tools' questions go to the client in the middle of the call (elicitation/create).
func (s *Server) StatefulHandler() http.Handler { return s.handler(nil) }

func (s *Server) handler(opts *sdk.StreamableHTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.Server }, opts))
	mux.Handle("/connect", s.Pages())
	return mux
}

// ServePages listens on addr (127.0.0.1:0 for any port) for the pages and returns their base URL.
func (s *Server) ServePages(addr string) (string, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: s.Pages(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	base := "http://" + l.Addr().String()
	s.SetPages(base)
	return base, func() { srv.Close() }, nil
}

// SetPages sets the base URL the pages are served at (see Pages).
func (s *Server) SetPages(base string) {
	s.mu.Lock()
	s.pages = strings.TrimRight(base, "/")
	s.mu.Unlock()
}
