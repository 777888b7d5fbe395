package toolserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSeparator joins a server's name and a tool's: "tickets__close_ticket".
const toolSeparator = "__"

// maxToolName is the longest function name chat-completions endpoints accept.
const maxToolName = 64

// Tool is a tool of a server as the model is offered it.
type Tool struct {
	// Name is what the model calls it: the server's name, "__", the tool's, made of the
	// characters function names allow, and unique among the agent's tools.
	Name        string
	Server      string
	Tool        string
	Title       string
	Description string
	// Schema is the JSON Schema of its arguments.
	Schema map[string]any
	// Approve says the person approves each call before it runs.
	Approve bool
}

// tool describes a tool of the server for the model, with the operator's approval settings:
// read_only wins over approve_tools, which wins over approve.
func (s *server) tool(t *sdk.Tool) Tool {
	out := Tool{Name: toolName(s.cfg.Name, t.Name), Server: s.cfg.Name, Tool: t.Name, Title: t.Title, Description: t.Description}
	if out.Title == "" && t.Annotations != nil {
		out.Title = t.Annotations.Title
	}
	switch schema := t.InputSchema.(type) {
	case map[string]any:
		out.Schema = schema
	default:
		// Any other form is read back as JSON: the model needs an object.
		if b, err := json.Marshal(schema); err == nil {
			_ = json.Unmarshal(b, &out.Schema)
		}
	}
	if out.Schema == nil {
		out.Schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	switch {
	case slices.Contains(s.cfg.ReadOnly, t.Name):
	case slices.Contains(s.cfg.ApproveTools, t.Name):
		out.Approve = true
	default:
		out.Approve = s.cfg.Approve
	}
	return out
}

// toolName namespaces a tool under its server in the characters function names allow
// (a-z, A-Z, 0-9, _ and -), at most 64 of them: a longer name keeps its start and ends in
// a hash of the whole, so that two long names stay apart.
func toolName(server, tool string) string {
	full := server + toolSeparator + tool
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, full)
	if clean == full && len(clean) <= maxToolName {
		return clean
	}
	sum := sha256.Sum256([]byte(full))
	tag := "_" + hex.EncodeToString(sum[:4])
	if len(clean) > maxToolName-len(tag) {
		clean = clean[:maxToolName-len(tag)]
	}
	return clean + tag
}
