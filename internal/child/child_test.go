package child

import (
	"slices"
	"testing"
)

func TestAChildGetsNoneOfParleysKeys(t *testing.T) {
	env := []string{"PATH=/usr/bin", "HOME=/home/p", "LC_ALL=C.UTF-8", "PARLEY_OPENAI_API_KEY=sk-1", "TICKETS_TOKEN=t0k", "AWS_SECRET_ACCESS_KEY=x"}
	got := Env(env, false)
	if !slices.Equal(got, []string{"PATH=/usr/bin", "HOME=/home/p", "LC_ALL=C.UTF-8"}) {
		t.Errorf("env = %q", got)
	}
	if got := Env(env, true); len(got) != len(env) {
		t.Errorf("inherit_env: %q", got)
	}
}
