// Package a2aserver serves Parley's agents to A2A clients: an agent card per agent and a
// JSON-RPC endpoint that speaks A2A v0.3 and v1.0. Every task is a conversation in Parley's
// ledger; what a client reads of a task (tasks/get, a resubscription) is derived from the
// conversation's log, so it tells the truth after a restart.
package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/a2av1"
	"github.com/parley-chat/parley/runner"
)

// Options configure the A2A server.
type Options struct {
	// LegacyToken is the one shared token of older Parleys (PARLEY_A2A_TOKEN), if still set:
	// it is served as the client named domain.LegacyA2AClient. Every other client has a token
	// of its own (store.CreateA2AClient).
	LegacyToken string
	// Watch registers an open request with what ends the streams whose access went away
	// (web.Server's watch): check, run at once and again whenever access may have changed,
	// reports whether the request's client may go on; cancel ends the request when it may
	// not; ok false says it may not start. nil: a revoked client's open requests go on (its
	// new ones are refused).
	Watch func(ctx context.Context, cancel context.CancelFunc, check func(context.Context) (time.Time, bool)) (remove func(), open func(context.Context) bool, ok bool)
	// StructuredOutput sends the final result as a DataPart {is_task_complete, ...} rather than text.
	StructuredOutput bool
	// DefaultAgent is the agent of /.well-known/agent-card.json.
	DefaultAgent string
	// CheckFile checks a file a client sends as the browser's uploads are checked; MaxFiles
	// bounds the files of one message.
	CheckFile func(name string, content []byte) (domain.File, error)
	MaxFiles  int
	Logger    *slog.Logger
}

// Store is what the server reads and writes of Parley's ledger (store.DB).
type Store interface {
	CreateConversation(ctx context.Context, userID int64, agentName, title, nonce string) (domain.Conversation, error)
	Conversation(ctx context.Context, id int64) (domain.Conversation, error)
	Events(ctx context.Context, conversationID, after int64) ([]domain.Event, error)
	LastEventID(ctx context.Context, conversationID int64) (int64, error)
	PendingQuestions(ctx context.Context, conversationID int64) ([]int64, error)
	Question(ctx context.Context, id int64) (domain.QuestionRecord, error)
	LinkA2ATask(ctx context.Context, taskID, contextID, agentName string, client domain.A2AClient, conversationID int64) error
	A2ATask(ctx context.Context, agentName string, clientID int64, taskID string) (domain.A2ATask, error)
	A2AContextConversation(ctx context.Context, agentName string, clientID int64, contextID string) (int64, error)
	InterruptedA2ATasks(ctx context.Context) ([]int64, error)
	A2AClientByToken(ctx context.Context, secret string) (domain.A2AClient, error)
	A2AClient(ctx context.Context, id int64) (domain.A2AClient, error)
	A2AClients(ctx context.Context) ([]domain.A2AClient, error)
	LegacyA2AClient(ctx context.Context, secret string) (domain.A2AClient, error)
	Audit(ctx context.Context, actor, action string, convID int64, detail string) error
}

// Person is who answers and writes in conversations started over A2A.
const Person = "a2a client"

// Server is Parley's A2A server.
type Server struct {
	opts   Options
	db     Store
	runner *runner.Runner
	log    *slog.Logger
	// user owns the conversations started over A2A.
	user domain.User
	// closed ends every stream when Parley stops.
	closed context.Context
	close  context.CancelFunc

	agents map[string]*endpoint
	mux    *http.ServeMux
}

// endpoint is one agent's JSON-RPC endpoint: the SDK's request handler behind a v0.3 and a
// v1.0 JSON-RPC front.
type endpoint struct {
	x   *executor
	rpc http.Handler
}

// New returns the server of the runner's agents.
func New(db Store, runner *runner.Runner, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 10
	}
	if opts.Watch == nil {
		opts.Watch = func(context.Context, context.CancelFunc, func(context.Context) (time.Time, bool)) (func(), func(context.Context) bool, bool) {
			return func() {}, func(context.Context) bool { return true }, true
		}
	}
	s := &Server{opts: opts, db: db, runner: runner, log: opts.Logger, agents: map[string]*endpoint{}}
	s.closed, s.close = context.WithCancel(context.Background())
	for _, info := range runner.Agents() {
		x := &executor{s: s, agent: info.Name}
		inner := a2asrv.NewHandler(x, a2asrv.WithTaskStore(&taskStore{x: x}), a2asrv.WithLogger(s.log))
		h := handler{RequestHandler: inner, x: x}
		s.agents[info.Name] = &endpoint{x: x, rpc: a2av1.Server(a2asrv.NewJSONRPCHandler(h))}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		s.serveCard(w, r, s.opts.DefaultAgent)
	})
	s.mux.HandleFunc("GET /a2a/{agent}/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		s.serveCard(w, r, r.PathValue("agent"))
	})
	s.mux.HandleFunc("POST /a2a/{agent}", s.serveRPC)
	return s
}

// Start serves the old shared token as its client, if it is set, and takes up the tasks a stop
// or a crash cut off, so that what a client reads of them is true: they are working again.
// owner is the service account of the conversations of tasks.
func (s *Server) Start(ctx context.Context, owner domain.User) error {
	s.user = owner
	if err := s.startClients(ctx); err != nil {
		return err
	}
	ids, err := s.db.InterruptedA2ATasks(ctx)
	if err != nil {
		return fmt.Errorf("a2a tasks: %w", err)
	}
	for _, id := range ids {
		if err := s.runner.Retry(ctx, id); err != nil {
			s.log.Error("a2a: take up an interrupted task", "conversation", id, "error", err)
		}
	}
	return nil
}

// Close ends the open streams, each with a last status event that tells the client the task
// goes on after Parley's restart.
func (s *Server) Close() { s.close() }

// ServeHTTP serves the agent cards and the JSON-RPC endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// endpoint is the named agent's endpoint, when A2A clients may use the agent: its access
// list lets Parley's a2a account in ("everyone", or "person:a2a"). Others are not there.
func (s *Server) endpoint(name string) (*endpoint, bool) {
	ep, ok := s.agents[name]
	if !ok || !s.runner.MayUse(domain.Person{User: s.user}, name) {
		return nil, false
	}
	return ep, true
}

func (s *Server) serveCard(w http.ResponseWriter, r *http.Request, name string) {
	if _, ok := s.endpoint(name); !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("No agent %q.", name)})
		return
	}
	writeJSON(w, http.StatusOK, s.card(r, name))
}

func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	ep, ok := s.endpoint(r.PathValue("agent"))
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("No agent %q.", r.PathValue("agent"))})
		return
	}
	c, err := s.authenticate(r)
	if domain.ErrorCode(err) == domain.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": domain.ErrorMessage(err)})
		return
	}
	if err != nil {
		s.log.Error("a2a: authenticate", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "Parley could not check the token; try again."})
		return
	}
	ep.rpc.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// card is an agent card for clients of both versions: the v0.3 fields, and the interfaces
// of v1.0 (one URL answers both, told apart by A2A-Version and the method names).
type card struct {
	*a2a.AgentCard
	SupportedInterfaces []iface `json:"supportedInterfaces"`
}

type iface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// card describes one Parley agent to A2A clients.
func (s *Server) card(r *http.Request, name string) card {
	info, _ := s.runner.Agent(name)
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/a2a/%s", scheme, r.Host, name)
	return card{
		AgentCard: &a2a.AgentCard{
			Name:               info.Title,
			Description:        info.Description,
			URL:                url,
			PreferredTransport: a2a.TransportProtocolJSONRPC,
			ProtocolVersion:    "0.3.0",
			Version:            "1.0.0",
			Capabilities:       a2a.AgentCapabilities{Streaming: true},
			DefaultInputModes:  []string{"text/plain", "application/json"},
			DefaultOutputModes: []string{"text/plain", "application/json"},
			Skills:             []a2a.AgentSkill{{ID: info.Name, Name: info.Title, Description: info.Description, Tags: []string{"parley"}}},
			SecuritySchemes:    a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
			Security:           []a2a.SecurityRequirements{{"bearer": {}}},
		},
		SupportedInterfaces: []iface{
			{URL: url, ProtocolBinding: string(a2a.TransportProtocolJSONRPC), ProtocolVersion: a2av1.Version},
			{URL: url, ProtocolBinding: string(a2a.TransportProtocolJSONRPC), ProtocolVersion: "0.3"},
		},
	}
}

// executor runs one Parley agent for A2A requests: a message starts or continues the task's
// conversation (answering its pending question when there is one), and the conversation's
// events are translated into A2A events until the agent asks or finishes.
type executor struct {
	s     *Server
	agent string
	// cancelling holds the tasks a Cancel is stopping: their failed run is the cancel's to report.
	cancelling sync.Map
}
