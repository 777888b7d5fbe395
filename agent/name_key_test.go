package agent_test

import (
	"testing"

	"github.com/parley-chat/parley/agent"
)

// Names that look alike have one key, whatever their script, width or letter case; names
// that look different do not.
func TestNameKey(t *testing.T) {
	same := [][]string{
		{"root", "rооt", "ROOT", "Root", "ｒｏｏｔ", "r00t"},
		{"paypal", "paypa1", "PAYPAL", "рауpаl"},
		{"modern", "rnodern"},
		{"Il", "ll", "lI"},
	}
	for _, group := range same {
		for _, name := range group[1:] {
			if agent.NameKey(name) != agent.NameKey(group[0]) {
				t.Errorf("NameKey(%q) = %q, NameKey(%q) = %q: want them equal", name, agent.NameKey(name), group[0], agent.NameKey(group[0]))
			}
		}
	}
	for _, pair := range [][2]string{{"ann", "anne"}, {"admin", "admín"}, {"bob", "rob"}, {"a.b", "a_b"}} {
		if agent.NameKey(pair[0]) == agent.NameKey(pair[1]) {
			t.Errorf("NameKey(%q) = NameKey(%q) = %q: want them different", pair[0], pair[1], agent.NameKey(pair[0]))
		}
	}
}
