package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// client answers what a process of the agent asks of Parley: its updates and questions go
// to the turn that runs, its file requests to the workspace. Terminals are not offered.
type client struct{ p *proc }

// SessionUpdate passes an update on to the turn; those outside a turn (a session/load
// replaying the history the conversation shows already) are dropped.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	if t := c.p.current(); t != nil {
		t.update(n.Update)
	}
	return nil
}

// RequestPermission asks the person, through the turn; outside a turn nobody can answer.
func (c *client) RequestPermission(ctx context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	t := c.p.current()
	if t == nil {
		c.p.a.log.Warn("the coding agent asked for permission outside a turn; cancelled", "conversation", c.p.conv)
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return t.permission(ctx, req)
}

// UnstableCreateElicitation asks the person a form, through the turn.
func (c *client) UnstableCreateElicitation(ctx context.Context, req sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	t := c.p.current()
	if t == nil || req.Form == nil {
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	return t.elicit(ctx, *req.Form)
}

// ReadTextFile reads a file of the workspace, and refuses any other.
func (c *client) ReadTextFile(_ context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	line, limit := 0, 0
	if req.Line != nil {
		line = *req.Line
	}
	if req.Limit != nil {
		limit = *req.Limit
	}
	if t := c.p.current(); t != nil {
		t.mu.Lock()
		t.touchLocked()
		t.mu.Unlock()
	}
	text, err := c.p.root.read(req.Path, line, limit)
	if err != nil {
		return sdk.ReadTextFileResponse{}, c.refuse("read", req.Path, err)
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

// WriteTextFile writes a file of the workspace, and refuses any other; the turn shows the
// change on the tool card it belongs to.
func (c *client) WriteTextFile(_ context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	root := c.p.root
	old, existed := root.current(req.Path)
	if err := root.write(req.Path, req.Content); err != nil {
		return sdk.WriteTextFileResponse{}, c.refuse("write", req.Path, err)
	}
	if t := c.p.current(); t != nil {
		var before *string
		if existed {
			before = &old
		}
		t.wrote(req.Path, before, req.Content)
	}
	return sdk.WriteTextFileResponse{}, nil
}

// refuse logs a file request Parley did not serve and says why, as a JSON-RPC error.
func (c *client) refuse(verb, path string, err error) error {
	a := c.p.a
	if errors.Is(err, errOutside) {
		a.log.Warn("the coding agent asked for a file outside its workspace; refused", "conversation", c.p.conv, "verb", verb, "path", path, "workspace", c.p.root.dir)
		return &sdk.RequestError{Code: -32602, Message: fmt.Sprintf("Parley refused to %s %s: it is outside the workspace %s", verb, path, c.p.root.dir)}
	}
	if errors.Is(err, errNoFile) {
		return &sdk.RequestError{Code: -32002, Message: fmt.Sprintf("Resource not found: %s: no such file", path)}
	}
	return &sdk.RequestError{Code: -32603, Message: fmt.Sprintf("could not %s %s: %v", verb, path, err)}
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalWaitForExit)
}
