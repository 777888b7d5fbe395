package domain_test

import (
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestHumanizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"branch_name", "Branch name"},
		{"pr_title", "PR title"},
		{"baseBranch", "Base branch"},
		{"api-url", "API URL"},
		{"x", "X"},
		{"__", "__"},
	}
	for _, tt := range tests {
		if got := domain.HumanizeName(tt.in); got != tt.want {
			t.Errorf("HumanizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTitle(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Plan a party", "Plan a party"},
		{"  first line\nsecond", "first line"},
		{"", "New conversation"},
		{strings.Repeat("word ", 30), strings.TrimSpace(strings.Repeat("word ", 12)) + "…"},
	}
	for _, tt := range tests {
		if got := domain.Title(tt.in); got != tt.want {
			t.Errorf("Title(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
