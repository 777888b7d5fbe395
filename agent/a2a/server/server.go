package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/agent"
)

// A2AOptions turns on Parley's A2A server: each agent is served over A2A JSON-RPC.
type A2AOptions struct {
	// Token is the bearer token every JSON-RPC request must carry.
	Token string
	// StructuredOutput sends the final result as a DataPart {is_task_complete, ...} rather than text.
	StructuredOutput bool
	// DefaultAgent is the agent of /.well-known/agent-card.json.
	DefaultAgent string
}

// a2aPerson is who answers and writes in conversations started over A2A.
const a2aPerson = "a2a client"

// a2aRoutes mounts the agent cards and one JSON-RPC endpoint per agent.
func (s *Server) a2aRoutes() {
	handlers := map[string]http.Handler{}
	for _, info := range s.runner.Agents() {
		ex := &a2aExecutor{s: s, agent: info.Name}
		inner := a2asrv.NewHandler(ex, a2asrv.WithTaskStore(&a2aTaskStore{s: s, agent: info.Name}), a2asrv.WithLogger(s.log))
		handlers[info.Name] = a2asrv.NewJSONRPCHandler(a2aHandler{RequestHandler: inner, x: ex})
	}
	s.echo.GET("/.well-known/agent-card.json", func(c echo.Context) error {
		return c.JSON(http.StatusOK, s.agentCard(c, s.a2a.DefaultAgent))
	})
	s.echo.GET("/a2a/:agent/.well-known/agent-card.json", func(c echo.Context) error {
		if _, ok := s.runner.Agent(c.Param("agent")); !ok {
			return agent.Errorf(agent.ENOTFOUND, "No agent %q.", c.Param("agent"))
		}
		return c.JSON(http.StatusOK, s.agentCard(c, c.Param("agent")))
	})
	s.echo.POST("/a2a/:agent", func(c echo.Context) error {
		h, ok := handlers[c.Param("agent")]
		if !ok {
			return agent.Errorf(agent.ENOTFOUND, "No agent %q.", c.Param("agent"))
		}
		scheme, got, _ := strings.Cut(c.Request().Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.a2a.Token)) != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
			return c.JSON(http.StatusUnauthorized, map[string]string{"error": "a bearer token is required"})
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	})
}

// agentCard describes one Parley agent to A2A clients.
func (s *Server) agentCard(c echo.Context, name string) *a2a.AgentCard {
	info, _ := s.runner.Agent(name)
	scheme := "http"
	if c.Request().TLS != nil || c.Request().Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s/a2a/%s", scheme, c.Request().Host, name)
	return &a2a.AgentCard{
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
	}
}

// a2aTaskStore keeps the SDK's tasks in Parley's SQLite ledger.
type a2aTaskStore struct {
	s     *Server
	agent string
}

func (t *a2aTaskStore) Save(ctx context.Context, task *a2a.Task) error {
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	return t.s.db.SaveA2ATask(ctx, string(task.ID), task.ContextID, t.agent, b)
}

func (t *a2aTaskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	b, _, err := t.s.db.A2ATask(ctx, t.agent, string(id))
	if agent.ErrorCode(err) == agent.ENOTFOUND || (err == nil && len(b) == 0) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	var task a2a.Task
	if err := json.Unmarshal(b, &task); err != nil {
		return nil, fmt.Errorf("a2a task %s: %w", id, err)
	}
	return &task, nil
}

// a2aExecutor runs one Parley agent for A2A requests: a message starts or continues the
// task's conversation (answering its pending question when there is one), and the
// conversation's events are translated into A2A events until the agent asks or finishes.
type a2aExecutor struct {
	s     *Server
	agent string
	// cancelling holds the tasks a Cancel is stopping: their failed run is the cancel's to report.
	cancelling sync.Map
}
