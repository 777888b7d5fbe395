package domain_test

import (
	"testing"

	"github.com/parley-chat/parley/domain"
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
			if domain.NameKey(name) != domain.NameKey(group[0]) {
				t.Errorf("NameKey(%q) = %q, NameKey(%q) = %q: want them equal", name, domain.NameKey(name), group[0], domain.NameKey(group[0]))
			}
		}
	}
	for _, pair := range [][2]string{{"ann", "anne"}, {"admin", "admín"}, {"bob", "rob"}, {"a.b", "a_b"}} {
		if domain.NameKey(pair[0]) == domain.NameKey(pair[1]) {
			t.Errorf("NameKey(%q) = NameKey(%q) = %q: want them different", pair[0], pair[1], domain.NameKey(pair[0]))
		}
	}
}
