package builtin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// BenchReply is what the benchmark's agents write: the Markdown a model writes, with a
// heading, lists, emphasis, code, a table and plain prose, repeated as long as asked.
const BenchReply = `## What I found

The build **failed at step 3** because the module cache was stale. Here is what happened, in order:

1. The runner restored an old cache from last week.
2. ` + "`go mod download`" + ` skipped the new version of *golang.org/x/net*.
3. The compiler then read an API that no longer exists.

### The fix

Clear the cache key when ` + "`go.sum`" + ` changes:

` + "```yaml" + `
- uses: actions/cache@v4
  with:
    path: ~/go/pkg/mod
    key: go-${{ hashFiles('go.sum') }}
` + "```" + `

| Step | Before | After |
|---|---:|---:|
| restore | 41 s | 38 s |
| build | failed | 1 min 12 s |

With that change the pipeline passed three times in a row. If you want, I can also pin the toolchain so that a new Go release does not change the build without a review.

`

// BenchTokens cuts n tokens of BenchReply the way model tokenizers roughly do (3.5 to 4 bytes
// on average, like OpenAI's on English): a word with its leading space, split in pieces of
// five past eight bytes; a run of the same punctuation ("**", " `", "```"), with the line
// ends after it; line ends.
func BenchTokens(n int) []string {
	var all []string
	for len(all) < n {
		rest := BenchReply
		for rest != "" && len(all) < n {
			k := 1
			if rest[0] == ' ' && len(rest) > 1 && !isWordByte(rest[1]) && rest[1] != ' ' && rest[1] != '\n' {
				k = 2 // a space and the punctuation after it
			}
			switch c := rest[k-1]; {
			case c == '\n':
				for k < len(rest) && rest[k] == '\n' {
					k++
				}
			case isWordByte(c) || c == ' ':
				for k < len(rest) && isWordByte(rest[k]) {
					k++
				}
				if k > 8 {
					k = 5
				}
			default:
				for k < len(rest) && rest[k] == c {
					k++
				}
				for k < len(rest) && rest[k] == '\n' {
					k++
				}
			}
			all, rest = append(all, rest[:k]), rest[k:]
		}
	}
	return all
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// BenchPlan is what a benchmark conversation's message asks for: Tokens tokens at Rate a
// second (0: at once), the first at Start, from token From of the reply on (conversations
// that are not all at the same place, as people's are not); Ask first asks a question and
// streams after the answer.
type BenchPlan struct {
	Start  time.Time
	Rate   float64
	Tokens int
	From   int
	Ask    bool
}

// Reply is the plan's reply, token by token.
func (p BenchPlan) Reply() []string { return BenchTokens(p.From + p.Tokens)[p.From:] }

// String is the plan as a message.
func (p BenchPlan) String() string {
	s := fmt.Sprintf("bench start=%d rate=%g tokens=%d from=%d", p.Start.UnixNano(), p.Rate, p.Tokens, p.From)
	if p.Ask {
		s += " ask"
	}
	return s
}

// ParseBenchPlan reads a plan from a message; ok is false when it holds none.
func ParseBenchPlan(text string) (BenchPlan, bool) {
	f := strings.Fields(text)
	if len(f) == 0 || f[0] != "bench" {
		return BenchPlan{}, false
	}
	p := BenchPlan{Tokens: 100}
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "start":
			ns, _ := strconv.ParseInt(v, 10, 64)
			p.Start = time.Unix(0, ns)
		case "rate":
			p.Rate, _ = strconv.ParseFloat(v, 64)
		case "tokens":
			p.Tokens, _ = strconv.Atoi(v)
		case "from":
			p.From, _ = strconv.Atoi(v)
		case "ask":
			p.Ask = true
		}
	}
	return p, true
}

// At is when token i is due.
func (p BenchPlan) At(i int) time.Time {
	if p.Rate <= 0 {
		return p.Start
	}
	return p.Start.Add(time.Duration(float64(i) / p.Rate * float64(time.Second)))
}

// NewBench returns the scripted agent of `parley bench` (served when PARLEY_BENCH_AGENT=1):
// it writes BenchReply token by token on the schedule its message gives, so that the
// benchmark knows when each token was due. It is not one of All.
func NewBench() domain.Agent { return benchAgent{} }

type benchAgent struct{}

func (benchAgent) Info() domain.Info {
	return domain.Info{Name: "bench", Title: "Bench", Description: "Streams a fixed reply on a schedule, for parley bench."}
}

func (benchAgent) Step(ctx context.Context, in domain.StepInput, out domain.Output) error {
	var plan BenchPlan
	answered := false
	for _, ev := range in.History {
		switch ev.Kind {
		case domain.EventUserMessage:
			plan, _ = ParseBenchPlan(ev.Text)
			answered = false
		case domain.EventQuestionResolved:
			answered = true
		}
	}
	if plan.Ask && !answered {
		_, err := out.Ask(domain.Question{Message: "Go on?", Fields: []domain.Field{{Name: "go", Label: "Go on", Kind: domain.KindText}}})
		return err
	}
	if plan.Ask {
		plan.Start = time.Now() // after the answer, at once
	}
	toks := plan.Reply()
	var t *time.Timer
	for i, tok := range toks {
		if wait := time.Until(plan.At(i)); wait > 0 {
			if t == nil {
				t = time.NewTimer(wait)
			} else {
				t.Reset(wait)
			}
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if err := out.Text(tok); err != nil {
			return err
		}
	}
	return nil
}
