package builtin

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// action is one kind of change the platform engineer prepares.
type action struct {
	Name    string
	Verb    string // "create the pull request", for "Okay, I won't ..."
	Message string
	// Fields builds the form, prefilled with what the message already says.
	Fields func(text string) []domain.Field
	// Describe says exactly what the engineer would do with the answers, in Markdown.
	Describe func(values map[string]any) string
}

// actions are the changes the platform engineer knows, in the order intents are tried.
var actions = []action{
	{Name: "jira", Verb: "create the Jira issue", Message: "To create a Jira issue, I need the following information:",
		Fields: jiraFields, Describe: describeJira},
	{Name: "pr", Verb: "open the pull request", Message: "To create a GitHub pull request, I need the following information:",
		Fields: prFields, Describe: describePR},
	{Name: "config", Verb: "change the configuration", Message: "To update the configuration, I need the following information:",
		Fields: configFields, Describe: describeConfig},
}

// actionNamed finds an action by name.
func actionNamed(name string) (action, bool) {
	for _, a := range actions {
		if a.Name == name {
			return a, true
		}
	}
	return action{}, false
}

// actionFor picks the action a message asks for, by keywords.
func actionFor(text string) (action, bool) {
	lower := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if containsWord(lower, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("jira"):
		return actionNamed("jira")
	case has("pull request", "pull-request", "pr", "merge request"):
		return actionNamed("pr")
	case has("issue", "ticket", "bug report"):
		return actionNamed("jira")
	case has("config", "configuration", "setting", "settings", "feature flag") || configSet.MatchString(text):
		return actionNamed("config")
	}
	return action{}, false
}

var (
	branchRe   = regexp.MustCompile(`(?i)\bbranch\s+(?:named\s+|called\s+)?` + "`?" + `([\w][\w./-]*[\w])`)
	fromRe     = regexp.MustCompile(`(?i)\bfrom\s+` + "`?" + `([\w-]+/[\w./-]*[\w])`)
	baseRe     = regexp.MustCompile(`(?i)\b(?:into|onto|against|to|base(?:\s+branch)?)\s+` + "`?" + `(main|develop|staging)\b`)
	quotedRe   = regexp.MustCompile(`["“]([^"”]{3,200})["”]`)
	aboutRe    = regexp.MustCompile(`(?i)\b(?:issue|ticket|bug)\s+(?:for|about|on)\s+(?:the\s+)?([^.,;!?\n]{3,120}?)(?:\s*(?:[.,;!?\n]|\bwith\b|\bassign|\bpriority\b|\b(?:highest|high|medium|low|lowest)\s+priority)|$)`)
	priorityRe = regexp.MustCompile(`(?i)\b(highest|high|medium|low|lowest)\s+priority\b|\bpriority\s*(?:of|:|=|is)?\s*(highest|high|medium|low|lowest)\b`)
	assignRe   = regexp.MustCompile(`(?i)\bassign(?:ed)?\s+(?:it\s+)?to\s+@?([\w][\w.-]*)`)
	configSet  = regexp.MustCompile(`(?i)\bset\s+` + "`?" + `([A-Za-z_][\w.-]*)` + "`?" + `\s+(?:to|=)\s+("[^"]*"|` + "`[^`]*`" + `|\S+)`)
	configEq   = regexp.MustCompile(`\b([A-Za-z_][\w.-]*[\w])\s*=\s*("[^"]*"|\S+)`)
)

// submatch is the first non-empty group of re's first match in text.
func submatch(re *regexp.Regexp, text string) string {
	m := re.FindStringSubmatch(text)
	for _, g := range m[min(1, len(m)):] {
		if g != "" {
			return g
		}
	}
	return ""
}

// withDefault sets f's default when v is not empty.
func withDefault(f domain.Field, v any) domain.Field {
	if s, ok := v.(string); ok && s == "" {
		return f
	}
	f.Default = v
	return f
}

func prFields(text string) []domain.Field {
	branch := firstNonEmpty(submatch(branchRe, text), submatch(fromRe, text))
	base := strings.ToLower(submatch(baseRe, text))
	if base == "" {
		base = "main"
	}
	return []domain.Field{
		withDefault(domain.Field{Name: "branch_name", Label: "Branch name", Kind: domain.KindText, Required: true,
			Description: "The source branch for the pull request", MaxLength: intp(200)}, branch),
		withDefault(domain.Field{Name: "pr_title", Label: "Pull request title", Kind: domain.KindText, Required: true,
			Description: "Title of the pull request", MaxLength: intp(200)}, submatch(quotedRe, text)),
		{Name: "pr_description", Label: "Description", Kind: domain.KindTextarea,
			Description: "What the change does and why", MaxLength: intp(10000)},
		{Name: "base_branch", Label: "Base branch", Kind: domain.KindSelect, Required: true, Default: base,
			Description: "Target branch", Options: []domain.Option{{Value: "main"}, {Value: "develop"}, {Value: "staging"}}},
	}
}

func jiraFields(text string) []domain.Field {
	title := firstNonEmpty(submatch(quotedRe, text), strings.TrimSpace(submatch(aboutRe, text)))
	title = capitalize(title)
	priority := "Medium"
	if p := submatch(priorityRe, text); p != "" {
		priority = capitalize(strings.ToLower(p))
	} else if lower := strings.ToLower(text); containsWord(lower, "urgent") || containsWord(lower, "critical") || containsWord(lower, "blocker") {
		priority = "Highest"
	}
	var opts []domain.Option
	for _, p := range []string{"Highest", "High", "Medium", "Low", "Lowest"} {
		opts = append(opts, domain.Option{Value: p})
	}
	return []domain.Field{
		withDefault(domain.Field{Name: "issue_title", Label: "Issue title", Kind: domain.KindText, Required: true,
			Description: "A one-line summary of the issue", MaxLength: intp(255)}, title),
		{Name: "issue_description", Label: "Description", Kind: domain.KindTextarea, Required: true,
			Description: "What happens, what should happen, and how to reproduce it", MaxLength: intp(10000)},
		{Name: "priority", Label: "Priority", Kind: domain.KindSelect, Required: true, Default: priority,
			Description: "How urgent the issue is", Options: opts},
		withDefault(domain.Field{Name: "assignee", Label: "Assignee", Kind: domain.KindText,
			Description: "Jira username of the assignee; leave empty for unassigned", MaxLength: intp(100)},
			submatch(assignRe, text)),
	}
}

func configFields(text string) []domain.Field {
	m := configSet.FindStringSubmatch(text)
	if m == nil {
		m = configEq.FindStringSubmatch(text)
	}
	key, value := "", ""
	if m != nil {
		key, value = m[1], strings.Trim(m[2], "\"`")
	}
	lower := strings.ToLower(text)
	now := containsWord(lower, "immediately") || containsWord(lower, "right away") || containsWord(lower, "right now")
	return []domain.Field{
		withDefault(domain.Field{Name: "config_key", Label: "Configuration key", Kind: domain.KindText, Required: true,
			Description: "The setting to change, for example cache.ttl_seconds", MaxLength: intp(200),
			Pattern: `[A-Za-z0-9_.\-/]+`}, key),
		withDefault(domain.Field{Name: "config_value", Label: "New value", Kind: domain.KindText, Required: true,
			Description: "The value to set", MaxLength: intp(1000)}, value),
		{Name: "apply_immediately", Label: "Apply immediately", Kind: domain.KindBoolean, Default: now,
			Description: "Apply now rather than with the next deployment"},
	}
}

func describePR(v map[string]any) string {
	branch, base, title := textValue(v, "branch_name"), textValue(v, "base_branch"), textValue(v, "pr_title")
	var b strings.Builder
	fmt.Fprintf(&b, "Here is exactly what I would do: open a GitHub pull request from %s into %s titled **%s**.\n\n",
		code(branch), code(base), oneLine(title))
	b.WriteString(valueTable([][2]string{{"Source branch", code(branch)}, {"Base branch", code(base)}, {"Title", oneLine(title)}}))
	desc := strings.TrimSpace(textValue(v, "pr_description"))
	if desc != "" {
		fmt.Fprintf(&b, "\nDescription:\n\n%s\n", quote(desc))
	}
	cmd := fmt.Sprintf("gh pr create --head %s --base %s --title %s", shellQuote(branch), shellQuote(base), shellQuote(title))
	if desc != "" {
		cmd += " --body " + shellQuote(desc)
	}
	fmt.Fprintf(&b, "\nThe equivalent command:\n\n%s", domain.Fence("sh", cmd))
	return b.String()
}

func describeJira(v map[string]any) string {
	title, priority := textValue(v, "issue_title"), textValue(v, "priority")
	assignee := textValue(v, "assignee")
	var b strings.Builder
	fmt.Fprintf(&b, "Here is exactly what I would do: create a Jira issue titled **%s** with priority **%s**, ", oneLine(title), priority)
	if assignee != "" {
		fmt.Fprintf(&b, "assigned to %s.\n\n", code(assignee))
	} else {
		b.WriteString("left unassigned.\n\n")
	}
	rows := [][2]string{{"Title", oneLine(title)}, {"Priority", priority}, {"Assignee", firstNonEmpty(code(assignee), "_unassigned_")}}
	b.WriteString(valueTable(rows))
	if desc := strings.TrimSpace(textValue(v, "issue_description")); desc != "" {
		fmt.Fprintf(&b, "\nDescription:\n\n%s\n", quote(desc))
	}
	return b.String()
}

func describeConfig(v map[string]any) string {
	key, value := textValue(v, "config_key"), textValue(v, "config_value")
	when := "with the next deployment"
	if boolValue(v, "apply_immediately") {
		when = "immediately"
	}
	return fmt.Sprintf("Here is exactly what I would do: set %s to %s and apply it %s.\n\n%s",
		code(key), code(value), when, valueTable([][2]string{{"Key", code(key)}, {"Value", code(value)}, {"Applied", when}}))
}
