// Package intake analyzes the first message of a round before an agent reads it: it keeps
// a short message whole, and splits a long one into the person's intent and context items
// (logs, code, data, specifications) that the runner stores as user_context documents.
//
// New returns the analyzer the runner uses. It measures the message in tokens (CountTokens)
// and passes it whole while it is within a share of the model's context window; above that
// it asks a model-backed Splitter when there is one, checking its answer with Validate, and
// the built-in, offline Split otherwise. DetectLanguage guesses the language of the prose.
package intake

import (
	"context"
	"log/slog"

	"github.com/parley-chat/parley/domain"
)

// Defaults of Options.
const (
	DefaultContextWindow = 8192
	DefaultShare         = 0.10
)

// Splitter is a model-backed analysis of a message (backend/openai has one): it is asked only
// about messages above the threshold, and its answer is checked with Validate.
type Splitter interface {
	Split(ctx context.Context, text string) (domain.Analysis, error)
}

// Options configures New.
type Options struct {
	// ContextWindow is the model's context window in tokens; 8192 when zero.
	ContextWindow int
	// Share is the part of the context window a message may take and still pass whole;
	// 0.10 when zero.
	Share float64
	// Model splits messages above the threshold; the built-in Split does without it.
	Model Splitter
	// Logger receives why a model's analysis was not used (never the message); slog's
	// default when nil.
	Logger *slog.Logger
}

// analyzer is the domain.Analyzer New returns.
type analyzer struct {
	threshold int
	// modelMax is the largest message the model is asked about, in tokens: half its window,
	// since its answer repeats the message's blocks. Larger ones go to Split.
	modelMax int
	model    Splitter
	log      *slog.Logger
}

// New returns the analyzer the runner calls on the first message of each round. A message
// of at most ContextWindow*Share tokens comes back whole (Via "whole"): its intent is the
// text byte for byte, with no items. A longer one goes to the Model (Via "model") and, when
// the model fails or answers something Validate rejects, comes back whole all the same (Via
// "fallback", the reason logged). Without a Model, or when the message is over half the
// model's window (its answer, which repeats the blocks, could not fit), it goes to Split (Via
// "builtin"). The
// analysis always carries the message's Tokens and the Threshold, and the language of its
// prose when one is detected.
func New(opts Options) domain.Analyzer {
	if opts.ContextWindow <= 0 {
		opts.ContextWindow = DefaultContextWindow
	}
	if opts.Share <= 0 {
		opts.Share = DefaultShare
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &analyzer{
		// The epsilon keeps 0.29*100 at 29 rather than 28.999999999999996.
		threshold: int(float64(opts.ContextWindow)*opts.Share + 1e-9),
		modelMax:  opts.ContextWindow / 2,
		model:     opts.Model,
		log:       opts.Logger,
	}
}

// Analyze implements domain.Analyzer. Text that is not valid UTF-8 or holds NUL bytes is
// analyzed with those bytes replaced by U+FFFD. The only error is the context's, when it
// ends while the model is asked.
func (az *analyzer) Analyze(ctx context.Context, text string) (domain.Analysis, error) {
	text = clean(text)
	tokens := CountTokens(text)
	var a domain.Analysis
	switch {
	case tokens <= az.threshold:
		a = whole(text, "whole")
	case az.model != nil && tokens <= az.modelMax:
		var err error
		a, err = az.model.Split(ctx, text)
		if err == nil {
			a, err = Validate(text, a)
		}
		if err != nil {
			if ctx.Err() != nil {
				return domain.Analysis{}, ctx.Err()
			}
			az.log.Warn("intake: the model's analysis is unusable, the message passes whole",
				"error", err, "bytes", len(text), "tokens", tokens, "threshold", az.threshold)
			a = whole(text, "fallback")
			break
		}
		a.Via = "model"
		if a.Language == "" {
			a.Language = DetectLanguage(proseOf(text))
		}
	default:
		a = Split(text)
	}
	a.Tokens, a.Threshold = tokens, az.threshold
	return a, nil
}

// whole is the analysis of a message that passes untouched.
func whole(text, via string) domain.Analysis {
	return domain.Analysis{Intent: text, Language: DetectLanguage(proseOf(text)), Via: via}
}

// proseOf is the start of the message's prose, without any of the blocks Split finds
// (small ones included), enough to detect its language on.
func proseOf(text string) string {
	sc := newScanner(text)
	var t tidy
	next := 0
	for _, b := range sc.scan() {
		for ; next < b.from; next++ {
			t.limited(sc.content(next))
		}
		next = b.to
		t.gap()
	}
	for ; next < len(sc.lines); next++ {
		t.limited(sc.content(next))
	}
	return t.String()
}
