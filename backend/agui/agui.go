// Package agui is the back end for agents that speak AG-UI 1.0 (the Agent-User Interaction
// protocol, docs.ag-ui.com), as LangGraph, CrewAI, Mastra, Pydantic AI, Google ADK and many
// other frameworks serve it: each step POSTs a RunAgentInput and reads the run's events
// from the server-sent event stream that comes back.
//
// The agent's text streams into the conversation, its own tool calls become tool cards,
// its steps and state its progress. A run that ends in interrupts becomes questions in the
// ledger, one per interrupt; a run that calls Parley's frontend tool request_user_input
// asks through it. The answers go to the next run: resume entries for the interrupts, tool
// messages for the calls. Nothing waits on a connection: the thread, the agent's state and
// the open interrupts live in the conversation's checkpoints (see checkpoint.go), so that a
// restart of Parley loses nothing.
package agui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-chat/parley/domain"
)

// DefaultIdleTimeout allows for agents that think (or call tools) for a while between events.
const DefaultIdleTimeout = 5 * time.Minute

// capabilitiesTimeout bounds the read of the agent's capabilities.
const capabilitiesTimeout = 3 * time.Second

// refreshInterval is how often Info tries again to read capabilities that could not be read.
const refreshInterval = time.Minute

// Config describes one AG-UI agent, as an operator declares it.
type Config struct {
	// Name identifies the agent in URLs and the ledger; Title and Description are shown in
	// the picker (the agent's own identity, when it publishes capabilities, fills them in).
	Name, Title, Description string
	// URL is where runs are POSTed.
	URL string
	// Headers go with every request; BearerToken, when set, as Authorization: Bearer.
	Headers     map[string]string
	BearerToken string
	// Credential names the setting the token comes from (bearer_token_env): a 401 or 403
	// names it as the one to fix.
	Credential string
	// ForwardedProps are passed to every run as they are (a LangGraph config, say).
	ForwardedProps map[string]any
	// AllowEmail lets interrupts ask for email addresses.
	AllowEmail bool
	// HTTPClient is used for every request; nil means a client without any timeout.
	HTTPClient *http.Client
	// IdleTimeout is how long a run may send nothing before it counts as stalled;
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Agent is a domain.Agent backed by an AG-UI agent.
type Agent struct {
	cfg      Config
	http     *http.Client
	endpoint string // the URL as errors show it, without credentials
	props    json.RawMessage

	caps    atomic.Pointer[capabilities]
	dial    sync.Mutex
	lastTry domain.Throttle
}

// capabilities is what Parley reads of the agent's AgentCapabilities.
type capabilities struct {
	Identity *struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"identity"`
	Tools *struct {
		ClientProvided *bool `json:"clientProvided"`
	} `json:"tools"`
	HumanInTheLoop *struct {
		Interrupts *bool `json:"interrupts"`
	} `json:"humanInTheLoop"`
	// published is false when the agent publishes none: nothing is known then.
	published bool
}

// New checks cfg and returns the agent. It tries to read the agent's capabilities at once,
// briefly; an agent that is down is not an error here: faults are reported on the next step.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	cfg.Name, cfg.URL = strings.TrimSpace(cfg.Name), strings.TrimSpace(cfg.URL)
	if cfg.Name == "" {
		return nil, errors.New("agui agent: name is required")
	}
	if cfg.URL == "" {
		return nil, fmt.Errorf("agent %q: url is required", cfg.Name)
	}
	u, ok := domain.WebURL(cfg.URL)
	if !ok {
		return nil, fmt.Errorf("agent %q: url %q must be an http:// or https:// URL", cfg.Name, cfg.URL)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	props := json.RawMessage("{}")
	if len(cfg.ForwardedProps) > 0 {
		b, err := json.Marshal(cfg.ForwardedProps)
		if err != nil {
			return nil, fmt.Errorf("agent %q: forwarded_props: %v", cfg.Name, err)
		}
		props = b
	}
	a := &Agent{cfg: cfg, endpoint: u.Redacted(), http: cfg.HTTPClient, props: props}
	if a.http == nil {
		a.http = &http.Client{}
	}
	cctx, cancel := context.WithTimeout(ctx, capabilitiesTimeout)
	defer cancel()
	a.readCapabilities(cctx)
	return a, nil
}

// Info describes the agent in the picker: the operator's words first, then the agent's own.
func (a *Agent) Info() domain.Info {
	info := domain.Info{Name: a.cfg.Name, Title: a.cfg.Title, Description: a.cfg.Description}
	c := a.caps.Load()
	if c == nil {
		a.refresh()
	} else if c.Identity != nil {
		if info.Title == "" {
			info.Title = strings.TrimSpace(c.Identity.Name)
		}
		if info.Description == "" {
			info.Description = strings.TrimSpace(c.Identity.Description)
		}
	}
	if info.Title == "" {
		info.Title = info.Name
	}
	return info
}

// offersTool reports whether runs offer request_user_input: unless the agent says it takes
// no tools from its client.
func (a *Agent) offersTool() bool {
	c := a.caps.Load()
	return c == nil || c.Tools == nil || c.Tools.ClientProvided == nil || *c.Tools.ClientProvided
}

// interruptsRefused reports whether the agent published that it does not interrupt.
func (a *Agent) interruptsRefused() bool {
	c := a.caps.Load()
	return c != nil && c.HumanInTheLoop != nil && c.HumanInTheLoop.Interrupts != nil && !*c.HumanInTheLoop.Interrupts
}

// refresh tries, in the background and at most once a refreshInterval, to read capabilities
// that could not be read before.
func (a *Agent) refresh() {
	a.lastTry.Go(refreshInterval, func() {
		ctx, cancel := context.WithTimeout(context.Background(), capabilitiesTimeout)
		defer cancel()
		a.readCapabilities(ctx)
	})
}

// readCapabilities reads GET <url>/capabilities, where the AG-UI integrations that publish
// AgentCapabilities serve them (ADK, Strands). An agent that answers 404 publishes none: that
// is known, and not asked again; one that cannot be reached is asked again later.
func (a *Agent) readCapabilities(ctx context.Context) {
	a.dial.Lock()
	defer a.dial.Unlock()
	a.lastTry.Mark()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(a.cfg.URL, "/")+"/capabilities", nil)
	if err != nil {
		return
	}
	a.header(req)
	req.Header.Set("Accept", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var c capabilities
	if resp.StatusCode == http.StatusOK {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil || json.Unmarshal(b, &c) != nil {
			c = capabilities{}
		} else {
			c.published = true
		}
	} else if resp.StatusCode >= 500 {
		return
	}
	a.caps.Store(&c)
}

// header sets the operator's headers and the token on a request.
func (a *Agent) header(req *http.Request) {
	for k, v := range a.cfg.Headers {
		req.Header.Set(k, v)
	}
	if a.cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+a.cfg.BearerToken)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
