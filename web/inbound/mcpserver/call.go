package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
)

// call is one tool call's arguments, read and checked.
type call struct {
	who       *caller
	tool      string
	args      map[string]json.RawMessage
	wait      time.Duration
	requestID string
	// group is the group the question is for, when "to" names one.
	group domain.Group
	// escalate is whom else the question goes to if it still waits, when asked.
	escalate *domain.Escalation
}

// badArgs is a tool result that tells the model what is wrong with its arguments.
func badArgs(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

// readCall decodes a call's arguments, refusing names the tool does not take, and reads
// the arguments both tools share.
func (s *Server) readCall(req *mcp.CallToolRequest, known ...string) (*call, *mcp.CallToolResult) {
	c := &call{who: callerOf(req), tool: req.Params.Name, wait: s.opts.MaxWait}
	if c.who == nil {
		return nil, badArgs("Parley could not tell who calls: send a personal access token.")
	}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &c.args); err != nil {
		return nil, badArgs("The arguments must be a JSON object.")
	}
	var unknown []string
	for k := range c.args {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badArgs("%s takes no argument %s; it takes %s.", c.tool, quoteAll(unknown), strings.Join(known, ", "))
	}
	if w, ok, bad := c.duration("wait"); bad != nil {
		return nil, bad
	} else if ok {
		c.wait = min(w, s.opts.MaxWait)
	}
	id, bad := c.str("request_id", false)
	if bad != nil {
		return nil, bad
	}
	c.requestID = id
	if len(c.requestID) > 200 {
		return nil, badArgs("request_id is too long: at most 200 characters.")
	}
	return c, nil
}

// checkEscalation reads escalate_after and escalate_to, given together: a group the caller
// may ask, or a member of one.
func (s *Server) checkEscalation(ctx context.Context, c *call) *mcp.CallToolResult {
	after, hasAfter, bad := c.duration("escalate_after")
	if bad != nil {
		return bad
	}
	to, bad := c.str("escalate_to", false)
	if bad != nil {
		return bad
	}
	switch {
	case !hasAfter && to == "":
		return nil
	case !hasAfter || to == "":
		return badArgs("escalate_after and escalate_to go together: give both, or neither.")
	case after < time.Second:
		return badArgs("escalate_after must be at least 1s.")
	}
	groups, err := s.opts.GroupsOf(ctx, c.who.user.ID)
	if err != nil {
		return badArgs("Parley could not read your groups: %s Try again.", domain.ErrorMessage(err))
	}
	for _, g := range groups {
		if !g.MayAsk(c.who.user.ID) {
			continue
		}
		if strings.EqualFold(g.Name, to) {
			c.escalate = &domain.Escalation{After: after, To: g.Name, GroupID: g.ID}
			return nil
		}
		for _, m := range g.Members {
			if m.Role == domain.RoleMember && strings.EqualFold(m.Name, to) && m.UserID != c.who.user.ID {
				c.escalate = &domain.Escalation{After: after, To: m.Name, UserID: m.UserID}
			}
		}
	}
	if c.escalate == nil {
		return badArgs("escalate_to: you may not escalate to %q: name a group you may ask, or a member of one.", to)
	}
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// str reads a string argument.
func (c *call) str(name string, required bool) (string, *mcp.CallToolResult) {
	raw, ok := c.args[name]
	if !ok || string(raw) == "null" {
		if required {
			return "", badArgs("%s is required.", name)
		}
		return "", nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", badArgs("%s must be a string.", name)
	}
	v = strings.TrimSpace(v)
	if required && v == "" {
		return "", badArgs("%s is required.", name)
	}
	return v, nil
}

// duration reads a Go duration ("10m"); ok is false when it is not given.
func (c *call) duration(name string) (d time.Duration, ok bool, bad *mcp.CallToolResult) {
	v, bad := c.str(name, false)
	if bad != nil || v == "" {
		return 0, false, bad
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false, badArgs(`%s must be a Go duration such as "30s", "10m" or "24h", not %q.`, name, v)
	}
	return d, true, nil
}

// checkTo reads "to": the caller (by default), or a group they may ask (a member of it, or
// let by staff). Anyone or anything else is refused.
func (s *Server) checkTo(ctx context.Context, c *call) *mcp.CallToolResult {
	to, bad := c.str("to", false)
	if bad != nil || to == "" || strings.EqualFold(to, c.who.user.Name) {
		return bad
	}
	refused := badArgs("to: you may not ask %q: a token's person may ask themselves (leave to out) and the groups they belong to, or that staff let them ask.", to)
	g, err := s.opts.Group(ctx, to)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		return refused
	}
	if err != nil {
		return badArgs("Parley could not read the group %q: %s Try again.", to, domain.ErrorMessage(err))
	}
	if !g.MayAsk(c.who.user.ID) {
		return refused
	}
	// Whoever asks does not answer their own question to a group: others must be there.
	if g.MembersBesides(c.who.user.ID) == 0 {
		return badArgs("to: the group %s has no members besides you, and whoever asks does not answer their own question: ask someone else, or leave to out to ask yourself.", g.Name)
	}
	c.group = g
	return nil
}

// digest stands for what a call asks (its arguments but wait and request_id), so that a
// request_id given again with other arguments is told apart.
func (c *call) digest() string {
	h := sha256.New()
	h.Write([]byte(c.tool))
	keys := make([]string, 0, len(c.args))
	for k := range c.args {
		if k != "wait" && k != "request_id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v any
		d := json.NewDecoder(bytes.NewReader(c.args[k]))
		d.UseNumber()
		_ = d.Decode(&v)
		b, _ := json.Marshal(v) // a canonical form: object keys sorted, no spaces
		fmt.Fprintf(h, "\n%s=%s", k, b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// client names the program that calls: its clientInfo (title, else name) where the
// revision gives it, else the token's name.
func client(req *mcp.CallToolRequest, who *caller) string {
	if info := req.ClientInfo(); info != nil {
		if name := strings.TrimSpace(info.Title); name != "" {
			return domain.Title(name)
		}
		if name := strings.TrimSpace(info.Name); name != "" {
			return domain.Title(name)
		}
	}
	return domain.Title(who.token)
}
