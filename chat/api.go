package chat

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/internal/wire"
)

// chatClient speaks Parley's JSON API (/api/v1) with a personal access token. The token goes
// in the Authorization header only: never in a URL, never in an error or a log line.
type chatClient struct {
	base  string // the server, without a trailing slash
	token string
	http  *http.Client
	// streamIdle is how long the event stream may carry nothing at all (the server sends a
	// heartbeat every 15 s) before it is taken for dead and reconnected; 0 is 45 s.
	streamIdle time.Duration
	// retryWait is the first wait before reconnecting the event stream; 0 is 200 ms.
	retryWait time.Duration
}

// apiError is an error the API answered with: its status, code and message, and for a
// question's answer the message of each bad field or the question as it stands.
type apiError struct {
	Status int
	api.ErrorBody
}

func (e *apiError) Error() string {
	if e.Status == http.StatusUnauthorized {
		return "the server refused the token: it is not valid (revoked?). Make a new one with " +
			"`parley token add NAME --user YOU` or on the settings page"
	}
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("the server answered %d %s", e.Status, http.StatusText(e.Status))
}

// statusOf is the HTTP status of an API error, 0 for any other error.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// The API's objects, as package api defines them for the server and its clients.
type (
	apiAgent            = api.Agent
	apiConversation     = api.Conversation
	apiMessage          = api.Message
	apiQuestion         = api.Question
	apiConversationPage = api.ConversationState
)

// call sends a request to path under /api/v1 with body as JSON (or as it is, when it is a
// *multipartBody) and decodes a successful answer into out, if given.
func (c *chatClient) call(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readAPIError(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// newRequest makes a request to path under /api/v1, with the token, and body as JSON (or
// as it is, when it is a *multipartBody).
func (c *chatClient) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case *multipartBody:
		r, ctype = &b.buf, b.ctype
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r, ctype = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, r)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return req, nil
}

// unreachable names the server (never the token) when a request does not get through.
func (c *chatClient) unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot reach Parley at %s (set PARLEY_URL or --server to its address): %w", c.base, err)
}

// readAPIError reads an error answer: the API's {"error": {...}}, or a problem+json
// document (RFC 9457), whose detail or title is the message.
func readAPIError(resp *http.Response) error {
	e := &apiError{Status: resp.StatusCode}
	var wrapped struct {
		Error  *apiError `json:"error"`
		Title  string    `json:"title"`
		Detail string    `json:"detail"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &wrapped) == nil {
		if wrapped.Error != nil {
			e = wrapped.Error
			e.Status = resp.StatusCode
		} else {
			e.Message = cmp.Or(wrapped.Detail, wrapped.Title)
		}
	}
	return e
}

func (c *chatClient) me(ctx context.Context) (string, error) {
	var me api.Me
	err := c.call(ctx, http.MethodGet, "/me", nil, &me)
	return me.Name, err
}

func (c *chatClient) agents(ctx context.Context) ([]apiAgent, error) {
	var out api.AgentList
	err := c.call(ctx, http.MethodGet, "/agents", nil, &out)
	return out.Agents, err
}

func (c *chatClient) conversation(ctx context.Context, id int64) (apiConversationPage, error) {
	var out apiConversationPage
	err := c.call(ctx, http.MethodGet, fmt.Sprintf("/conversations/%d", id), nil, &out)
	return out, err
}

func (c *chatClient) startConversation(ctx context.Context, agentName, text, nonce string) (apiConversation, error) {
	var out api.ConversationCreated
	err := c.call(ctx, http.MethodPost, "/conversations", api.NewConversation{Agent: agentName, Text: text, Nonce: nonce}, &out)
	return out.Conversation, err
}

func (c *chatClient) sendMessage(ctx context.Context, id int64, text, nonce string) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("/conversations/%d/messages", id), api.NewMessage{Text: text, Nonce: nonce}, nil)
}

func (c *chatClient) stop(ctx context.Context, id int64) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("/conversations/%d/stop", id), nil, nil)
}

// rate gives the person's opinion of a reply (its message's event), replacing theirs.
func (c *chatClient) rate(ctx context.Context, conv, event int64, rating, comment string) error {
	return c.call(ctx, http.MethodPut, fmt.Sprintf("/conversations/%d/replies/%d/feedback", conv, event), api.FeedbackRequest{Rating: rating, Comment: comment}, nil)
}

func (c *chatClient) retry(ctx context.Context, id int64) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("/conversations/%d/retry", id), nil, nil)
}

// answer answers question q with values (typed as the API takes them); files are the paths
// of the files given for file fields, by field name, sent as multipart with every value.
func (c *chatClient) answer(ctx context.Context, q int64, values map[string]any, files map[string]string) (apiQuestion, error) {
	var out apiQuestion
	path := fmt.Sprintf("/questions/%d/answer", q)
	if len(files) == 0 {
		body, err := answerJSON(values)
		if err != nil {
			return out, err
		}
		return out, c.call(ctx, http.MethodPost, path, body, &out)
	}
	body, err := answerMultipart(values, files)
	if err != nil {
		return out, err
	}
	return out, c.call(ctx, http.MethodPost, path, body, &out)
}

func (c *chatClient) decline(ctx context.Context, q int64, reason string) (apiQuestion, error) {
	var out apiQuestion
	return out, c.call(ctx, http.MethodPost, fmt.Sprintf("/questions/%d/decline", q), api.Decline{Reason: reason}, &out)
}

func (c *chatClient) cancel(ctx context.Context, q int64) (apiQuestion, error) {
	var out apiQuestion
	return out, c.call(ctx, http.MethodPost, fmt.Sprintf("/questions/%d/cancel", q), nil, &out)
}

// answerJSON is an answer of typed values as the API takes it in JSON.
func answerJSON(values map[string]any) (api.Answer, error) {
	var body api.Answer
	if values != nil {
		body.Values = make(map[string]json.RawMessage, len(values))
	}
	for name, v := range values {
		j, err := json.Marshal(v)
		if err != nil {
			return body, fmt.Errorf("the answer to %s: %w", name, err)
		}
		body.Values[name] = j
	}
	return body, nil
}

// multipartBody is a request body already written as multipart/form-data.
type multipartBody struct {
	buf   bytes.Buffer
	ctype string
}

// answerMultipart writes an answer with files: every value as a form field (a list repeats
// its name) and each file as a file part named by its field.
func answerMultipart(values map[string]any, files map[string]string) (*multipartBody, error) {
	body := &multipartBody{}
	w := multipart.NewWriter(&body.buf)
	for name, v := range values {
		for _, s := range formStrings(v) {
			if err := w.WriteField(name, s); err != nil {
				return nil, err
			}
		}
	}
	for name, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		part, err := w.CreateFormFile(name, filepath.Base(path))
		if err == nil {
			_, err = io.Copy(part, f)
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	body.ctype = w.FormDataContentType()
	return body, nil
}

// formStrings writes a typed value as the form values that carry it.
func formStrings(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case bool:
		return []string{strconv.FormatBool(x)}
	case float64:
		return []string{strconv.FormatFloat(x, 'f', -1, 64)}
	case []string:
		return x
	case []any:
		var out []string
		for _, item := range x {
			out = append(out, formStrings(item)...)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}

// sseEvent is one event of a conversation's stream.
type sseEvent struct {
	Type string
	ID   string
	Data json.RawMessage
	// Err, on the last event the follower sends, is why the stream cannot go on.
	Err error
}

// follow reads the conversation's event stream into out from the cursor after (an event
// id, "" for the start), and reconnects with Last-Event-ID when the connection drops, until
// ctx ends, the conversation is deleted, the server refuses, or it cannot be reached for
// giveUp (then the last event sent carries the error). A connection that ends before it
// carried a line (an event or a heartbeat) counts as not reached: the waits keep growing.
func (c *chatClient) follow(ctx context.Context, id int64, after string, out chan<- sseEvent) {
	first := cmp.Or(c.retryWait, 200*time.Millisecond)
	cursor, initial := after, true
	wait, reached := first, time.Now()
	for ctx.Err() == nil {
		connected, err := c.followOnce(ctx, id, cursor, initial, out, &cursor)
		initial = false
		if errors.Is(err, errStreamOver) || ctx.Err() != nil {
			return
		}
		s := statusOf(err)
		if connected {
			wait, reached = first, time.Now()
		} else if wait *= 2; wait > 5*time.Second {
			wait = 5 * time.Second
		}
		if s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusNotFound || time.Since(reached) > giveUp {
			select {
			case out <- sseEvent{Err: fmt.Errorf("the conversation's events: %w", err)}:
			case <-ctx.Done():
			}
			return
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
}

// giveUp is how long the event stream tries to reconnect to a server it cannot reach.
const giveUp = 5 * time.Minute

var (
	// errStreamOver says the stream ended for good (the conversation was deleted).
	errStreamOver = errors.New("stream over")
	// errStreamIdle says the stream carried nothing, not even a heartbeat, for too long.
	errStreamIdle = errors.New("the event stream went quiet (no heartbeat)")
)

// followOnce reads one connection of the stream, until it ends or carries nothing for
// streamIdle; connected reports whether it carried a line.
func (c *chatClient) followOnce(ctx context.Context, id int64, cursor string, first bool, out chan<- sseEvent, last *string) (connected bool, err error) {
	path := fmt.Sprintf("/conversations/%d/events", id)
	if first && cursor != "" {
		path += "?after=" + url.QueryEscape(cursor)
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := cmp.Or(c.streamIdle, 45*time.Second)
	quiet := time.AfterFunc(idle, func() { cancel(errStreamIdle) })
	defer quiet.Stop()
	req, err := c.newRequest(reqCtx, http.MethodGet, path, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if !first && cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(context.Cause(reqCtx), errStreamIdle) {
			err = errStreamIdle
		}
		return false, c.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, readAPIError(resp)
	}
	sse := wire.NewReader(resp.Body, 16<<20)
	sse.Activity = func() {
		quiet.Reset(idle)
		connected = true
	}
	for {
		e, err := sse.Next()
		if err != nil {
			if errors.Is(context.Cause(reqCtx), errStreamIdle) {
				return connected, errStreamIdle
			}
			if errors.Is(err, io.EOF) {
				return connected, nil
			}
			return connected, err
		}
		ev := sseEvent{Type: e.Name, ID: e.ID, Data: json.RawMessage(bytes.Clone(e.Data))}
		if ev.ID != "" {
			*last = ev.ID
		}
		select {
		case out <- ev:
		case <-ctx.Done():
			return true, ctx.Err()
		}
		if ev.Type == api.ConversationDeleted {
			return true, errStreamOver
		}
	}
}
