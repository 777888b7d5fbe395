package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/parley-chat/parley/domain"
)

// holder names the agent as the live questions' reasons say it.
const holder = "coding agent"

// optionField is the name of a permission question's one field.
const optionField = "option"

// kindHints say what each kind of permission option does, under its name.
var kindHints = map[sdk.PermissionOptionKind]string{
	sdk.PermissionOptionKindAllowOnce:    "Allow once",
	sdk.PermissionOptionKindAllowAlways:  "Allow always: not asked again in this session",
	sdk.PermissionOptionKindRejectOnce:   "Reject once",
	sdk.PermissionOptionKindRejectAlways: "Reject always: refused without asking in this session",
}

// kindWords say what a tool call of each kind does, for the question.
var kindWords = map[string]string{
	"read": "reads files", "edit": "changes files", "delete": "deletes files", "move": "moves or renames files",
	"search": "searches", "execute": "runs a command", "think": "thinks", "fetch": "fetches from the network", "other": "other",
}

// permission asks the person whether the agent may go on with a tool call: one button per
// option it offers. An "always" answer given before in the session answers at once.
func (t *turn) permission(_ context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
	t.mu.Lock()
	if !t.holdLocked() {
		t.mu.Unlock()
		return cancelled, nil
	}
	defer t.unhold()
	t.touchLocked()
	tc := t.card(string(req.ToolCall.ToolCallId))
	t.apply(tc, req.ToolCall)
	key := ruleKey(tc)
	for _, r := range t.cp.Rules {
		if r.Key != key {
			continue
		}
		for _, o := range req.Options {
			if string(o.Kind) == r.Kind {
				verb := "Allowed"
				if strings.HasPrefix(r.Kind, "reject") {
					verb, tc.Status = "Rejected", domain.ToolRejected
				}
				tc.Notes = append(tc.Notes, fmt.Sprintf("%s without asking: “%s” was chosen earlier in this session.", verb, r.Name))
				t.show(tc)
				t.mu.Unlock()
				return selected(o.OptionId), nil
			}
		}
	}
	if t.ctx.Err() != nil {
		// The turn is being cancelled: ACP answers every request of it cancelled.
		t.mu.Unlock()
		return cancelled, nil
	}
	q := permissionQuestion(t.title, tc, req.Options)
	q.Key = "permission-" + tc.Key
	t.live(&q)
	id, err := t.out.Ask(q)
	if err != nil {
		t.keep(err)
		t.mu.Unlock()
		return cancelled, nil
	}
	if t.asking == nil {
		t.asking = map[string]bool{}
	}
	t.asking[tc.ID] = true
	tc.Status, tc.Waiting = domain.ToolWaiting, "your permission"
	t.show(tc)
	t.mu.Unlock()

	res, err := t.out.Await(t.ctx, id)

	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.asking, tc.ID)
	tc.Waiting = ""
	chosen, _ := res.Values[optionField].(string)
	i := slices.IndexFunc(req.Options, func(o sdk.PermissionOption) bool { return string(o.OptionId) == chosen })
	if err != nil || res.Outcome != domain.Answered || i < 0 || t.ctx.Err() != nil {
		// Not answered (stopped, set aside, expired), or answered as the turn was being
		// cancelled: the agent is told cancelled, and the call does not run.
		why := res.Reason
		if why == "" {
			why = "the turn was stopped"
		}
		tc.Status, tc.Error = domain.ToolFailed, "Not run: the permission request ended unanswered ("+strings.TrimSuffix(why, ".")+")."
		t.show(tc)
		return cancelled, nil
	}
	o := req.Options[i]
	tc.Status = domain.ToolRunning
	if strings.HasPrefix(string(o.Kind), "reject") {
		tc.Status = domain.ToolRejected
	}
	if o.Kind == sdk.PermissionOptionKindAllowAlways || o.Kind == sdk.PermissionOptionKindRejectAlways {
		t.cp.Rules = append(t.cp.Rules, rule{Key: key, Kind: string(o.Kind), Name: o.Name})
		t.keep(t.out.Checkpoint(t.cp))
		tc.Notes = append(tc.Notes, fmt.Sprintf("“%s”: Parley answers the same for %s from now on in this session.", o.Name, ruleScope(tc)))
	}
	t.show(tc)
	return selected(o.OptionId), nil
}

func selected(id sdk.PermissionOptionId) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(id)}
}

// ruleKey is what an "always" answer covers: every call of the same kind, for the kinds
// that only touch files; the same command (title) for those that run or fetch anything.
func ruleKey(tc *domain.ToolCall) string {
	switch tc.Kind {
	case "read", "edit", "delete", "move", "search", "think":
		return tc.Kind
	}
	return tc.Kind + ":" + tc.Tool
}

// ruleScope says what ruleKey covers, for the card.
func ruleScope(tc *domain.ToolCall) string {
	switch tc.Kind {
	case "read", "edit", "delete", "move", "search", "think":
		return "every call that " + kindWords[tc.Kind]
	}
	return "“" + tc.Tool + "”"
}

// live makes q a question the turn waits for on the connection, with its deadline.
func (t *turn) live(q *domain.Question) {
	q.Live, q.Holder, q.Asker = true, holder, t.title
	if t.a.cfg.AskTimeout > 0 {
		q.Deadline = time.Now().Add(t.a.cfg.AskTimeout)
	}
	q.NewMessageNote = "A new message instead of an answer cancels this request, and the agent's turn with it."
}

// permissionQuestion asks about the tool call: what it is (its title, kind, files, diff or
// input), and one choice per option, labelled with the option's name and its kind.
func permissionQuestion(title string, tc *domain.ToolCall, options []sdk.PermissionOption) domain.Question {
	name := tc.Tool
	if name == "" {
		name = "a tool call"
	}
	q := domain.Question{
		Message: fmt.Sprintf("%s asks for your permission: **%s**", title, strings.ReplaceAll(name, "*", `\*`)),
		Type:    domain.RequestApproval,
		Gate:    true,
		Choice:  true,
		Fields:  []domain.Field{{Name: optionField, Label: "Your answer", Kind: domain.KindSelect, Required: true}},
	}
	for _, o := range options {
		hint := kindHints[o.Kind]
		if hint == "" {
			hint = string(o.Kind)
		}
		reject := o.Kind == sdk.PermissionOptionKindRejectOnce || o.Kind == sdk.PermissionOptionKindRejectAlways
		q.Fields[0].Options = append(q.Fields[0].Options, domain.Option{Value: string(o.OptionId), Label: o.Name, Hint: hint, Reject: reject})
	}
	var b strings.Builder
	if w := kindWords[tc.Kind]; w != "" && tc.Kind != "other" {
		fmt.Fprintf(&b, "**Kind:** %s (%s)\n\n", tc.Kind, w)
	}
	if len(tc.Locations) > 0 {
		fmt.Fprintf(&b, "**Files:** %s\n\n", strings.Join(tc.Locations, ", "))
	}
	shown := false
	for _, c := range tc.Content {
		switch c.Type {
		case "diff":
			fmt.Fprintf(&b, "%s\n\n", domain.Fence("diff", c.Text))
			shown = true
		case "text":
			fmt.Fprintf(&b, "%s\n\n", domain.Fence("", c.Text))
			shown = true
		}
	}
	if !shown && len(tc.Arguments) > 0 {
		var v any
		if json.Unmarshal(tc.Arguments, &v) == nil {
			if pretty, err := json.MarshalIndent(v, "", "  "); err == nil {
				fmt.Fprintf(&b, "%s\n\n", domain.Fence("json", string(pretty)))
			}
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		q.Context = s
	}
	return q
}

// elicit asks the person the agent's form (its requested schema mapped as MCP's is) and
// answers accept with the typed values, decline or cancel.
func (t *turn) elicit(_ context.Context, form sdk.UnstableCreateElicitationForm) (sdk.UnstableCreateElicitationResponse, error) {
	schema, err := json.Marshal(form.RequestedSchema)
	if err != nil {
		return sdk.NewUnstableCreateElicitationResponseDecline(), nil
	}
	q := domain.Question{Message: strings.TrimSpace(form.Message), AllowCancel: true}
	if q.Message == "" {
		q.Message = "The agent asks for the following."
	}
	q, refusal := domain.SchemaQuestion(q, schema, domain.SchemaOptions{AllowEmail: t.a.cfg.AllowEmail})
	t.mu.Lock()
	if !t.holdLocked() {
		t.mu.Unlock()
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	defer t.unhold()
	if refusal != "" {
		tc := t.card(fmt.Sprintf("form-%d", t.n+1))
		tc.Tool, tc.Kind, tc.Status = "A form: "+q.Message, "other", domain.ToolRejected
		tc.Notes = append(tc.Notes, "Parley declined the agent's form: "+refusal)
		t.show(tc)
		t.mu.Unlock()
		return sdk.NewUnstableCreateElicitationResponseDecline(), nil
	}
	if t.ctx.Err() != nil {
		t.mu.Unlock()
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	t.n++
	q.Key = fmt.Sprintf("form-%d-%d", t.in.StepID, t.n)
	t.live(&q)
	id, err := t.out.Ask(q)
	t.keep(err)
	t.mu.Unlock()
	if err != nil {
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	res, err := t.out.Await(t.ctx, id)
	if err != nil || t.ctx.Err() != nil {
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	action, content, err := domain.SchemaAnswer(schema, res)
	switch {
	case err != nil:
		t.a.log.Warn("an answer did not fit the agent's form; cancelled", "error", err)
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	case action == "accept":
		r := sdk.NewUnstableCreateElicitationResponseAccept()
		r.Accept.Content = content
		return r, nil
	case action == "decline":
		return sdk.NewUnstableCreateElicitationResponseDecline(), nil
	}
	return sdk.NewUnstableCreateElicitationResponseCancel(), nil
}
