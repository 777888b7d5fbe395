// Package a2a is the back end for remote agents that speak the A2A protocol over JSON-RPC,
// v1.0 or v0.3, with the official Go SDK's (v0.3) types; a v1.0 agent's calls and answers
// are translated by internal/a2av1. It reads the agent card, streams message/stream into the
// conversation (status updates as progress, partial_result artifacts as live text,
// final_result as the end of the message), turns input-required into Parley questions, and
// answers back into the same task and context. Its client (client.go) reads each stream once,
// with internal/wire's event-stream reader.
//
// The agent keeps nothing between steps: the remote task id, context id and last seen state
// live in the conversation's checkpoints (see checkpoint.go), so that a resume, a Retry or a
// restart continues the same remote task.
package a2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/a2av1"
)

// Defaults for the zero values of Config.
const (
	// DefaultIdleTimeout allows for agents that think (or call tools) for a while between events.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultMaxArtifactBytes bounds one artifact (all its chunks together).
	DefaultMaxArtifactBytes = 1 << 20
)

// callTimeout bounds the short calls: the card, tasks/get, tasks/cancel.
const callTimeout = 30 * time.Second

// startTimeout bounds the card fetch New makes, so that a dead agent delays startup little.
const startTimeout = 3 * time.Second

// refreshInterval is how often Info tries again to fetch a card that could not be fetched.
const refreshInterval = time.Minute

// Config describes one remote A2A agent, as an operator declares it.
type Config struct {
	// Name identifies the agent in URLs and the ledger. Title and Description are shown until
	// the agent card has been read; an operator's Title wins over the card's name.
	Name, Title, Description string
	// CardURL is where the agent card is: the agent's base URL (the card is then read from
	// /.well-known/agent-card.json) or the full URL of the card.
	CardURL string
	// HTTPClient is used for every request; nil means a client without any timeout.
	HTTPClient *http.Client
	// Credential names the setting the bearer token comes from (an environment variable, a
	// key of the agents file): a 401 or 403 names it as the one to fix.
	Credential string
	// IdleTimeout is how long a stream may send nothing before it counts as stalled;
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxArtifactBytes bounds one artifact; 0 means DefaultMaxArtifactBytes.
	MaxArtifactBytes int
	// MaxDocumentBytes bounds the documents sent with one of the person's messages, all
	// together; 0 means DefaultMaxDocumentBytes, and a negative value sends none (they are
	// still listed in the message's text).
	MaxDocumentBytes int
}

// Agent is a domain.Agent backed by a remote A2A agent.
type Agent struct {
	cfg      Config
	base     string // the card's base URL
	cardPath string
	endpoint string // the card URL as shown in errors, without credentials
	http     *http.Client
	limits   limits

	conn    atomic.Pointer[conn]
	dial    sync.Mutex // one card fetch at a time
	lastTry domain.Throttle
}

// conn is the agent card and the client made from it.
type conn struct {
	card   *sdk.AgentCard
	client *client
}

// New checks cfg and returns the agent. It tries to read the agent card at once, briefly;
// an agent that is down is not an error here (the server starts anyway): the card is read
// again on the next step, and faults are reported there.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	cfg.Name = strings.TrimSpace(cfg.Name)
	cfg.CardURL = strings.TrimSpace(cfg.CardURL)
	if cfg.Name == "" {
		return nil, errors.New("a2a agent: name is required")
	}
	if cfg.CardURL == "" {
		return nil, fmt.Errorf("agent %q: card_url is required", cfg.Name)
	}
	u, ok := domain.WebURL(cfg.CardURL)
	if !ok {
		return nil, fmt.Errorf("agent %q: card_url %q must be an http:// or https:// URL", cfg.Name, cfg.CardURL)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxArtifactBytes <= 0 {
		cfg.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	switch {
	case cfg.MaxDocumentBytes == 0:
		cfg.MaxDocumentBytes = DefaultMaxDocumentBytes
	case cfg.MaxDocumentBytes < 0:
		cfg.MaxDocumentBytes = 0
	}
	a := &Agent{cfg: cfg, endpoint: u.Redacted()}
	a.base, a.cardPath = splitCardURL(u)

	a.http = http.DefaultClient
	if cfg.HTTPClient != nil {
		a.http = cfg.HTTPClient
	}
	// Events carry at most one artifact chunk plus its envelope. A Task may also carry the
	// message Parley sent, its documents in base64, in its history: that much more is read,
	// and the history dropped, before the limit applies.
	a.limits = limits{idle: cfg.IdleTimeout, maxEvent: cfg.MaxArtifactBytes + 64<<10,
		echo: base64.StdEncoding.EncodedLen(cfg.MaxDocumentBytes) + 64<<10}

	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	_, _ = a.connect(sctx)
	return a, nil
}

// splitCardURL splits a card URL into the base URL and the card's path.
func splitCardURL(u *url.URL) (base, path string) {
	p := u.EscapedPath()
	if !strings.HasSuffix(p, ".json") {
		return u.String(), "/.well-known/agent-card.json"
	}
	b := *u
	b.Path, b.RawPath, b.RawQuery, b.Fragment = "", "", "", ""
	path = p
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return b.String(), path
}

// Info describes the agent in the agent picker: from the card once it has been read.
func (a *Agent) Info() domain.Info {
	info := domain.Info{Name: a.cfg.Name, Title: a.cfg.Title, Description: a.cfg.Description}
	c := a.conn.Load()
	if c == nil {
		a.refresh()
	} else {
		if info.Title == "" {
			info.Title = strings.TrimSpace(c.card.Name)
		}
		if d := describe(c.card); d != "" {
			info.Description = d
		}
	}
	if info.Title == "" {
		info.Title = info.Name
	}
	return info
}

// describe is the card's description followed by its skills, one line each.
func describe(card *sdk.AgentCard) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(card.Description))
	if len(card.Skills) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Skills:")
		for _, s := range card.Skills {
			name := strings.TrimSpace(s.Name)
			if name == "" {
				name = s.ID
			}
			b.WriteString("\n- " + name)
			if d := strings.TrimSpace(s.Description); d != "" {
				b.WriteString(": " + d)
			}
		}
	}
	return b.String()
}

// refresh tries, in the background and at most once a refreshInterval, to read a card that
// could not be read before, so that the picker shows it once the agent is up.
func (a *Agent) refresh() {
	a.lastTry.Go(refreshInterval, func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_, _ = a.connect(ctx)
	})
}

// connect returns the client, reading the card first if it has not been read yet.
func (a *Agent) connect(ctx context.Context) (*conn, error) {
	if c := a.conn.Load(); c != nil {
		return c, nil
	}
	a.dial.Lock()
	defer a.dial.Unlock()
	if c := a.conn.Load(); c != nil {
		return c, nil
	}
	a.lastTry.Mark()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	card, v1URL, err := a.readCard(ctx)
	if err != nil {
		return nil, a.cardFault(err)
	}
	dialCard := *card
	if dialCard.PreferredTransport == "" {
		// The default binding of A2A v0.3.
		dialCard.PreferredTransport = sdk.TransportProtocolJSONRPC
	}
	if dialCard.URL == "" {
		dialCard.URL = a.base
	}
	if v1URL != "" {
		// The newest version the card offers: v1.0, each call translated from v0.3 and
		// each answer back.
		dialCard.URL, dialCard.PreferredTransport, dialCard.AdditionalInterfaces = v1URL, sdk.TransportProtocolJSONRPC, nil
	}
	client, err := newClient(&dialCard, a.http, v1URL != "", a.limits)
	if err != nil {
		return nil, a.faultf(err, "cannot talk to the agent described at %s: %v (Parley speaks A2A v1.0 and v0.3 over JSON-RPC)", a.endpoint, err)
	}
	c := &conn{card: card, client: client}
	a.conn.Store(c)
	return c, nil
}

// readCard reads the agent card, and the URL of its v1.0 JSON-RPC interface, "" when it
// offers none (a v0.3 agent).
func (a *Agent) readCard(ctx context.Context) (*sdk.AgentCard, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(a.base, "/")+a.cardPath, nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", &agentcard.ErrStatusNotOK{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", err
	}
	var raw struct {
		Interfaces []struct {
			URL     string `json:"url"`
			Binding string `json:"protocolBinding"`
			Version string `json:"protocolVersion"`
		} `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, "", fmt.Errorf("the agent card is not JSON: %w", err)
	}
	var card sdk.AgentCard
	if err := json.Unmarshal(b, &card); err != nil {
		// A v1.0 card's security schemes have another shape: Parley sends its token anyway.
		var m map[string]json.RawMessage
		_ = json.Unmarshal(b, &m)
		delete(m, "securitySchemes")
		delete(m, "security")
		delete(m, "securityRequirements")
		b2, _ := json.Marshal(m)
		if err := json.Unmarshal(b2, &card); err != nil {
			return nil, "", fmt.Errorf("the agent card cannot be read: %w", err)
		}
	}
	for _, i := range raw.Interfaces {
		if strings.EqualFold(i.Binding, string(sdk.TransportProtocolJSONRPC)) && i.Version == a2av1.Version && i.URL != "" {
			if _, ok := domain.WebURL(i.URL); ok {
				return &card, i.URL, nil
			}
		}
	}
	if card.URL == "" && len(raw.Interfaces) > 0 {
		// A v1.0-only card names its endpoints only among its interfaces.
		card.URL = raw.Interfaces[0].URL
	}
	return &card, "", nil
}

// title is the name errors and messages use for the agent.
func (a *Agent) title() string { return a.Info().Title }

// Reattaches says that after a restart the runner runs this agent again on its interrupted
// conversations: the remote task went on meanwhile, and the agent catches up with it.
func (a *Agent) Reattaches() bool { return true }
