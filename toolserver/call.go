package toolserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
)

// Call is one round of a tool call: the first, or one that sends the person's answers to
// the input requests of the round before (Responses, keyed by the requests' ids) with the
// state the server gave then.
type Call struct {
	Server, Tool string
	Arguments    json.RawMessage
	Responses    map[string]Response
	State        string
	// Progress is told each progress notification of the round.
	Progress func(domain.ToolProgress)
	// Live asks the person a request the server sends in the middle of the call (protocol
	// revisions before 2026-07-28) and waits for the answer; the call's timeout stops while
	// it waits. Its ctx ends when the call's does, the session's or the pool's, so that
	// nothing waits for an answer nobody can send back. Without it, such a request is
	// cancelled.
	Live func(ctx context.Context, in Input) (Response, error)
	// Wait is told that the call waits for a session of the server (all are held by other
	// calls whose server asks their person something), and with "" when it has one.
	Wait func(why string)
}

// Response is the answer to one input request: accept (with the content), decline or cancel.
type Response struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Result is how a round of a call ended: with the tool's result (Content, and Text for the
// model), or with input requests to put to the person before the call is sent again.
type Result struct {
	Content []domain.ToolContent
	Text    string
	IsError bool
	// Inputs are the server's requests for input; the call is sent again with the answers
	// and State. Retry marks requests of a URLElicitationRequired error: the call is sent
	// again as it was, without answers, once the person has been to the URLs.
	Inputs []Input
	State  string
	Retry  bool
}

// NeedsInput reports whether the call waits for the person.
func (r Result) NeedsInput() bool { return len(r.Inputs) > 0 }

// errTimeout ends a round that took longer than the server's timeout.
var errTimeout = errors.New("timeout")

// ErrUnavailable is the error of a call to a server that is not connected.
var ErrUnavailable = errors.New("the tool server is not available")

// Call runs one round of a call, within the server's timeout. An error is a call that did
// not reach a result: the server is down, timed out, or answered with a protocol error.
func (p *Pool) Call(ctx context.Context, c Call) (Result, error) {
	var s *server
	for _, srv := range p.servers {
		if srv.cfg.Name == c.Server {
			s = srv
		}
	}
	if s == nil {
		return Result{}, fmt.Errorf("there is no tool server %q", c.Server)
	}
	// The call ends when the pool closes, so that no session waits for it.
	ctx, stop := within(ctx, p.ctx)
	defer stop()
	// A wait for a session is a wait for other people: the timeout starts once there is one.
	st, release, err := s.lease(ctx, c.Wait)
	if err != nil {
		return Result{}, err
	}
	retire := false
	defer func() { release(retire) }()
	// The timeout of the round, stopped while the person answers a live request.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clock := time.AfterFunc(s.cfg.Timeout, func() { cancel(errTimeout) })
	defer clock.Stop()
	if c.Live != nil {
		done := st.track(func(hctx context.Context, in Input) (Response, error) {
			clock.Stop()
			defer clock.Reset(s.cfg.Timeout)
			hctx, stop := within(hctx, ctx)
			defer stop()
			return c.Live(hctx, in)
		})
		defer done()
	}
	var args any = map[string]any{}
	if len(c.Arguments) > 0 {
		args = c.Arguments
	}
	params := &sdk.CallToolParams{Name: c.Tool, Arguments: args, RequestState: c.State}
	if len(c.Responses) > 0 {
		params.InputResponses = sdk.InputResponseMap{}
		for id, r := range c.Responses {
			params.InputResponses[id] = &sdk.ElicitResult{Action: r.Action, Content: r.Content}
		}
	}
	if c.Progress != nil {
		token := watchProgress(st.cs, c.Progress)
		defer unwatchProgress(token)
		params.SetProgressToken(token)
	}
	res, err := st.cs.CallTool(ctx, params)
	if err != nil {
		// Cut off (a stop, the timeout): the server may go on with it, and ask for it later.
		retire = ctx.Err() != nil
		return p.callError(ctx, s, st, err)
	}
	if res.NeedsInput() && len(res.InputRequests) == 0 {
		return Result{}, errors.New("the tool server is busy (it asked to be called again later)")
	}
	// Over an older revision the result is not marked, but its requests are there all the same
	// (the SDK's server asks one round live, and returns the next).
	if res.NeedsInput() || len(res.InputRequests) > 0 {
		out := Result{State: res.RequestState}
		for id, ir := range res.InputRequests {
			out.Inputs = append(out.Inputs, s.input(id, ir))
		}
		sortInputs(out.Inputs)
		return out, nil
	}
	return readResult(res), nil
}

// within returns ctx, ended also when one of the others ends (with its cause).
func within(ctx context.Context, others ...context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stops := make([]func() bool, 0, len(others))
	for _, o := range others {
		stops = append(stops, context.AfterFunc(o, func() { cancel(context.Cause(o)) }))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}

// callError turns a failed call into a result the person and the model can read, or an error.
func (p *Pool) callError(ctx context.Context, s *server, st *session, err error) (Result, error) {
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc) && rpc.Code == sdk.CodeURLElicitationRequired:
		var data struct {
			Elicitations []*sdk.ElicitParams `json:"elicitations"`
		}
		if jerr := json.Unmarshal(rpc.Data, &data); jerr != nil || len(data.Elicitations) == 0 {
			return Result{}, fmt.Errorf("the server needs the person at a URL, but sent no URL it could be opened at (%v)", rpc.Message)
		}
		out := Result{Retry: true}
		for i, e := range data.Elicitations {
			e.Mode = "url"
			out.Inputs = append(out.Inputs, s.input(fmt.Sprintf("url-%d", i+1), e))
		}
		return out, nil
	case errors.As(err, &rpc):
		return Result{}, fmt.Errorf("the server refused the call: %s (error %d)", rpc.Message, rpc.Code)
	case errors.Is(context.Cause(ctx), errTimeout):
		return Result{}, fmt.Errorf("the tool did not answer within %s", s.cfg.Timeout)
	case p.ctx.Err() != nil:
		return Result{}, fmt.Errorf("%w (%s): Parley is stopping", ErrUnavailable, s.cfg.Name)
	case ctx.Err() != nil:
		return Result{}, ctx.Err()
	}
	var netErr net.Error
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.As(err, &netErr) {
		// The connection itself failed: the server is started again.
		st.markBroken(err)
		return Result{}, fmt.Errorf("%w (%s): the connection failed: %v", ErrUnavailable, s.cfg.Name, s.cfg.scrub(err))
	}
	return Result{}, fmt.Errorf("the call failed: %v", s.cfg.scrub(err))
}

// maxResultBytes bounds the text of a result the model gets; the person sees all of it.
const maxResultBytes = 32 << 10

// maxImageBytes bounds an image kept to show the person; a bigger one is named only.
const maxImageBytes = 1 << 20

// readResult turns the tool's result into what the person sees and the text the model gets.
// Text, images and resource links are shown; the model gets the text, the links, and a
// note of each image; anything else is named, never dropped in silence.
func readResult(res *sdk.CallToolResult) Result {
	var out Result
	out.IsError = res.IsError
	var text []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, domain.ToolContent{Type: "text", Text: c.Text})
			text = append(text, c.Text)
		case *sdk.ImageContent:
			note := fmt.Sprintf("[image, %s, %s: shown to the person, not to you]", c.MIMEType, domain.ByteSize(int64(len(c.Data))))
			if len(c.Data) <= maxImageBytes && isImageType(c.MIMEType) {
				out.Content = append(out.Content, domain.ToolContent{Type: "image", MIME: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)})
			} else {
				note = fmt.Sprintf("[image, %s, %s: too large or of a kind Parley does not show]", c.MIMEType, domain.ByteSize(int64(len(c.Data))))
				out.Content = append(out.Content, domain.ToolContent{Type: "unsupported", Text: note})
			}
			text = append(text, note)
		case *sdk.ResourceLink:
			out.Content = append(out.Content, domain.ToolContent{Type: "resource_link", URI: c.URI, Name: firstNonEmpty(c.Title, c.Name), MIME: c.MIMEType, Text: c.Description})
			line := fmt.Sprintf("Resource link: %s <%s>", firstNonEmpty(c.Title, c.Name, c.URI), c.URI)
			if c.MIMEType != "" {
				line += " (" + c.MIMEType + ")"
			}
			if c.Description != "" {
				line += ": " + c.Description
			}
			text = append(text, line)
		case *sdk.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				note := "[an embedded resource without contents]"
				out.Content = append(out.Content, domain.ToolContent{Type: "unsupported", Text: note})
				text = append(text, note)
			case r.Text != "":
				out.Content = append(out.Content, domain.ToolContent{Type: "text", Text: r.Text, URI: r.URI, MIME: r.MIMEType})
				text = append(text, fmt.Sprintf("Resource %s:\n%s", r.URI, r.Text))
			default:
				note := fmt.Sprintf("[embedded resource %s, %s, %s of binary data: not shown]", r.URI, firstNonEmpty(r.MIMEType, "no type"), domain.ByteSize(int64(len(r.Blob))))
				out.Content = append(out.Content, domain.ToolContent{Type: "unsupported", Text: note, URI: r.URI})
				text = append(text, note)
			}
		case *sdk.AudioContent:
			note := fmt.Sprintf("[audio, %s, %s: Parley does not play audio; not shown]", c.MIMEType, domain.ByteSize(int64(len(c.Data))))
			out.Content = append(out.Content, domain.ToolContent{Type: "unsupported", Text: note})
			text = append(text, note)
		default:
			note := fmt.Sprintf("[content of a kind Parley does not know (%T): not shown]", c)
			out.Content = append(out.Content, domain.ToolContent{Type: "unsupported", Text: note})
			text = append(text, note)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Content = append(out.Content, domain.ToolContent{Type: "text", Text: string(b)})
			text = append(text, string(b))
		}
	}
	out.Text = strings.Join(text, "\n\n")
	if len(out.Text) > maxResultBytes {
		cut := maxResultBytes
		for cut > 0 && !utf8.RuneStart(out.Text[cut]) {
			cut--
		}
		out.Text = out.Text[:cut] + fmt.Sprintf("\n\n[the result goes on for %s more; cut here to fit your context]", domain.ByteSize(int64(len(out.Text)-cut)))
	}
	if out.Text == "" {
		out.Text = "(the tool returned nothing)"
	}
	return out
}

func isImageType(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Progress notifications find their call by token, and only from the session of the call.
var (
	progressMu    sync.Mutex
	progressFuncs = map[string]progressWatch{}
	progressSeq   atomic.Int64
)

type progressWatch struct {
	cs *sdk.ClientSession
	f  func(domain.ToolProgress)
}

func watchProgress(cs *sdk.ClientSession, f func(domain.ToolProgress)) string {
	token := fmt.Sprintf("parley-%d", progressSeq.Add(1))
	progressMu.Lock()
	progressFuncs[token] = progressWatch{cs: cs, f: f}
	progressMu.Unlock()
	return token
}

func unwatchProgress(token string) {
	progressMu.Lock()
	delete(progressFuncs, token)
	progressMu.Unlock()
}

func progressHandler(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	token, _ := req.Params.ProgressToken.(string)
	progressMu.Lock()
	w, ok := progressFuncs[token]
	progressMu.Unlock()
	if ok && w.cs == req.Session {
		w.f(domain.ToolProgress{Done: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}
