package builtin

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestPlatformEngineer_PullRequest(t *testing.T) {
	c := newConvo(t, NewPlatformEngineer(Options{}))
	rec := c.send("Please create a pull request from branch feature/login into develop")
	if rec.Asked != 0 {
		t.Errorf("called Ask %d times; the engineer asks through UserInputMetaData only", rec.Asked)
	}
	if len(rec.FromText) != 1 {
		t.Fatalf("want one UserInputMetaData form, got %d; transcript:\n%s", len(rec.FromText), rec.transcript())
	}
	q := rec.FromText[0]
	if got, want := fieldNames(q), []string{"branch_name", "pr_title", "pr_description", "base_branch"}; !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	base := q.Fields[3]
	var opts []string
	for _, o := range base.Options {
		opts = append(opts, o.Value)
	}
	if base.Kind != domain.KindSelect || !slices.Equal(opts, []string{"main", "develop", "staging"}) || base.Default != "develop" {
		t.Errorf("base_branch is %s %v default %v", base.Kind, opts, base.Default)
	}
	if q.Fields[0].Default != "feature/login" || q.Fields[2].Kind != domain.KindTextarea {
		t.Errorf("branch default %v, description kind %s", q.Fields[0].Default, q.Fields[2].Kind)
	}

	c.answer(form("branch_name", "feature/login", "pr_title", "Add login page", "pr_description", "Adds the form.\nCloses #12.", "base_branch", "develop"))
	rec = c.resume()
	text := rec.transcript()
	for _, want := range []string{"`feature/login`", "into `develop`", "**Add login page**", "> Closes #12.",
		"gh pr create --head 'feature/login' --base 'develop'", "performed no external action"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	if again := c.deliver(t.Context(), domain.TriggerResume); len(again.Events) != 0 {
		t.Errorf("re-delivered resume reported %d events", len(again.Events))
	}
}

func TestPlatformEngineer_Forms(t *testing.T) {
	tests := []struct {
		name     string
		message  string
		want     []string
		defaults map[string]any
	}{
		{"jira", "Open a Jira issue for the login timeout, high priority, assign it to @maria",
			[]string{"issue_title", "issue_description", "priority", "assignee"},
			map[string]any{"issue_title": "Login timeout", "priority": "High", "assignee": "maria"}},
		{"ticket", "file a ticket about flaky CI, urgent", []string{"issue_title", "issue_description", "priority", "assignee"},
			map[string]any{"issue_title": "Flaky CI", "priority": "Highest"}},
		{"config", "Update the config: set cache.ttl to 300 immediately", []string{"config_key", "config_value", "apply_immediately"},
			map[string]any{"config_key": "cache.ttl", "config_value": "300", "apply_immediately": true}},
		{"pr shorthand", `open a PR titled "Fix typo"`, []string{"branch_name", "pr_title", "pr_description", "base_branch"},
			map[string]any{"pr_title": "Fix typo", "base_branch": "main"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConvo(t, NewPlatformEngineer(Options{}))
			rec := c.send(tt.message)
			if len(rec.FromText) != 1 {
				t.Fatalf("no form; transcript:\n%s", rec.transcript())
			}
			q := c.only()
			if got := fieldNames(q); !slices.Equal(got, tt.want) {
				t.Errorf("fields %v, want %v", got, tt.want)
			}
			for _, f := range q.Fields {
				if want, ok := tt.defaults[f.Name]; ok && f.Default != want {
					t.Errorf("%s default %#v, want %#v", f.Name, f.Default, want)
				}
			}
		})
	}
}

func TestPlatformEngineer_Outcomes(t *testing.T) {
	tests := []struct {
		name    string
		message string
		resolve func(c *convo)
		want    string
	}{
		{"declined", "create a pull request", func(c *convo) { c.decline() }, "Okay, I won't open the pull request"},
		{"jira answered", "create a jira issue", func(c *convo) {
			c.answer(form("issue_title", "Crash | on save", "issue_description", "It crashes.", "priority", "Low"))
		}, "| Title | Crash \\| on save |"},
		{"config answered", "change a setting", func(c *convo) {
			c.answer(form("config_key", "log.level", "config_value", "debug"))
		}, "set `log.level` to `debug` and apply it with the next deployment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConvo(t, NewPlatformEngineer(Options{}))
			c.send(tt.message)
			tt.resolve(c)
			rec := c.resume()
			if !strings.Contains(rec.transcript(), tt.want) {
				t.Errorf("transcript lacks %q:\n%s", tt.want, rec.transcript())
			}
			if len(c.pending()) != 0 {
				t.Error("asked again after the form was resolved")
			}
		})
	}
}

func TestPlatformEngineer_ExplainsWithoutAsking(t *testing.T) {
	c := newConvo(t, NewPlatformEngineer(Options{}))
	rec := c.send("hello, what can you do?")
	if len(rec.Questions()) != 0 {
		t.Fatal("asked a question for a message with no intent")
	}
	for _, want := range []string{"GitHub pull request", "Jira issue", "Configuration update", "no external action"} {
		if !strings.Contains(rec.transcript(), want) {
			t.Errorf("capabilities lack %q", want)
		}
	}
	rec = c.send("ok, open a pull request from feature/x")
	if q := c.only(); q.Fields[0].Default != "feature/x" {
		t.Errorf("second run did not prefill the branch: %v; transcript:\n%s", q.Fields[0].Default, rec.transcript())
	}
}
