package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// DefaultAnalyzerTimeout bounds an analyzer request when its Config sets no FirstByteTimeout.
const DefaultAnalyzerTimeout = 60 * time.Second

// analyzerPrompt is the analyzer prompt of seeds/002, its braces unescaped.
const analyzerPrompt = `You are an input analyzer. Split the user's message into:
1) intent: the user's core request in one concise paragraph, normalized to the user's language.
2) contextItems: supportive data to attach as separate documents if significantly larger than the intent. Include large literal data blocks, long lists/tables, code/JSON blocks, quoted transcripts, CSV fragments, or detailed specs. Keep URLs in the intent unless they include large pasted content.
Rules:
- If total content length (intent + data) is less than 10% of the model's max tokens, do not extract; return an empty contextItems and keep a compact, self-contained intent.
- If content exceeds that, move bulky parts into contextItems, keeping the intent short and clear.
- Preserve critical references (URLs, filenames) in the intent.
- Normalize the intent to the detected language. If mixed-language, use the primary detected language and normalize.
Output JSON only (no markdown):
{
  "detectedLanguage": "en",
  "intent": "Concise normalized request...",
  "contextItems": [
    {
      "title": "User context 1",
      "mimeType": "text/plain",
      "content": "Full extracted content block here"
    }
  ]
}`

// Analyzer asks a model to split a person's long message into its intent and the blocks to
// keep as documents (seeds/002): the model-backed splitter of intake, which decides when to
// call it and checks what it returns.
type Analyzer struct {
	a       *Agent
	timeout time.Duration
}

// NewAnalyzer returns an analyzer on the endpoint of cfg (base URL, API key, model,
// temperature, HTTP client); the rest of an agent's config is not used. A request may take
// cfg.FirstByteTimeout, DefaultAnalyzerTimeout when that is not set.
func NewAnalyzer(cfg Config) (*Analyzer, error) {
	timeout := cfg.FirstByteTimeout
	if timeout <= 0 {
		timeout = DefaultAnalyzerTimeout
	}
	if strings.TrimSpace(cfg.Name) == "" {
		cfg.Name = "intake"
	}
	cfg.Title = fmt.Sprintf("intake analyzer (%s)", strings.TrimSpace(cfg.Model))
	cfg.FirstByteTimeout, cfg.IdleTimeout = timeout, timeout
	a, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("intake analyzer: %w", err)
	}
	return &Analyzer{a: a, timeout: timeout}, nil
}

// errAnalyzerTimeout is the cause of an analyzer request that took too long.
var errAnalyzerTimeout = errors.New("the analyzer request took too long")

// Split sends text to the model with the analyzer prompt and reads its JSON reply. It fails
// for an endpoint's error, a reply that is not the analyzer's JSON, or one without an
// intent; it does not judge the split itself. Errors never quote the message.
func (az *Analyzer) Split(ctx context.Context, text string) (domain.Analysis, error) {
	a := az.a
	p := a.analyzerRequest(text)
	rctx, cancel := context.WithTimeoutCause(ctx, az.timeout, errAnalyzerTimeout)
	defer cancel()
	// The deadline bounds the request; the watch, given longer, only keeps an error's body.
	w := &watch{first: 2 * az.timeout, idle: 2 * az.timeout}
	res, err := a.chat.completion(rctx, p, w)
	if err != nil {
		status, contentType, _ := w.response()
		switch {
		case ctx.Err() != nil:
			return domain.Analysis{}, ctx.Err()
		case errors.Is(context.Cause(rctx), errAnalyzerTimeout):
			return domain.Analysis{}, a.faultf(err, "the model endpoint at %s did not answer within %s", a.endpoint, az.timeout)
		case status > 0 && status < 400 && !isJSON(contentType):
			return domain.Analysis{}, a.faultf(err, "the model endpoint at %s answered with %q instead of JSON: is the base URL right?", a.endpoint, contentType)
		}
		return domain.Analysis{}, a.requestFault(err, w)
	}
	if len(res.Choices.v) == 0 {
		return domain.Analysis{}, a.faultf(nil, "the model endpoint at %s sent no reply", a.endpoint)
	}
	ch := res.Choices.v[0]
	switch {
	case ch.FinishReason == "length":
		return domain.Analysis{}, a.faultf(nil, "the analysis was cut off by the model's length limit")
	case strings.TrimSpace(string(ch.Message.v.Content)) == "" && ch.Message.v.Refusal != "":
		return domain.Analysis{}, a.faultf(nil, "the model refused to analyze the message")
	}
	an, err := parseAnalysis(string(ch.Message.v.Content))
	if err != nil {
		return domain.Analysis{}, a.faultf(err, "%v", err)
	}
	return an, nil
}

// analyzerRequest is the body of an analyzer's request: the prompt and the text, for a
// reply in JSON.
func (a *Agent) analyzerRequest(text string) chatRequest {
	prompt := analyzerPrompt
	return chatRequest{
		Model:          a.cfg.Model,
		Messages:       []chatMessage{{Role: roleSystem, Content: &prompt}, {Role: roleUser, Content: &text}},
		Temperature:    a.cfg.Temperature,
		ResponseFormat: &responseFormat{Type: "json_object"},
	}
}

// isJSON reports whether a response's content type is JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// parseAnalysis reads the reply: one JSON object, bare or in a ``` fence, maybe
// after a reasoning model's <think> block. Its errors describe the shape, never the content.
func parseAnalysis(reply string) (domain.Analysis, error) {
	body := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(body, "<think>"); ok {
		if _, after, ok := strings.Cut(rest, "</think>"); ok {
			body = strings.TrimSpace(after)
		}
	}
	body, ok := unfence(body)
	if !ok || body == "" {
		return domain.Analysis{}, errors.New("the reply is not JSON")
	}
	dec := json.NewDecoder(strings.NewReader(body))
	var doc map[string]json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return domain.Analysis{}, fmt.Errorf("the reply is JSON %s, not an object", typeErr.Value)
		}
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			return domain.Analysis{}, fmt.Errorf("the reply is not JSON (error at byte %d of %d)", syntaxErr.Offset, len(body))
		}
		return domain.Analysis{}, fmt.Errorf("the reply is not JSON (it ends early, at %d bytes)", len(body))
	}
	if strings.TrimSpace(body[dec.InputOffset():]) != "" {
		return domain.Analysis{}, errors.New("the reply has text after its JSON object")
	}
	var an domain.Analysis
	var err error
	if an.Language, err = jsonString(doc, "detectedLanguage"); err != nil {
		return domain.Analysis{}, err
	}
	if an.Intent, err = jsonString(doc, "intent"); err != nil {
		return domain.Analysis{}, err
	}
	an.Language, an.Intent = strings.TrimSpace(an.Language), strings.TrimSpace(an.Intent)
	if an.Intent == "" {
		return domain.Analysis{}, errors.New("the reply has no intent")
	}
	if an.Items, err = contextItems(doc["contextItems"]); err != nil {
		return domain.Analysis{}, err
	}
	an.Via = "model"
	return an, nil
}

// contextItems reads the contextItems list: absent or null is none.
func contextItems(raw json.RawMessage) ([]domain.ContextItem, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("contextItems must be a list")
	}
	items := make([]domain.ContextItem, 0, len(list))
	for i, r := range list {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("contextItems[%d] must be an object", i)
		}
		var it domain.ContextItem
		var err error
		for _, f := range []struct {
			key string
			to  *string
		}{{"title", &it.Title}, {"mimeType", &it.MimeType}, {"content", &it.Content}} {
			if *f.to, err = jsonString(obj, f.key); err != nil {
				return nil, fmt.Errorf("contextItems[%d].%w", i, err)
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// jsonString reads a string member of an object: absent or null is "".
func jsonString(obj map[string]json.RawMessage, key string) (string, error) {
	raw, ok := obj[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string", key)
	}
	return s, nil
}
