package mdblock_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/internal/mdblock"
)

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // the finished blocks
	}{
		{"AParagraphBeingWritten", "Hello\nthere", nil},
		{"AParagraphEnded", "Hello\n\nNe", []string{"Hello\n\n"}},
		{"ATable", "| a | b |\n| --- | --- |\n| 1 | 2 |\n\nx", []string{"| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"}},
		{"AListAcrossBlankLines", "- one\n\n- two\n\n  more\n\nAfter\n", []string{"- one\n\n- two\n\n  more\n\n"}},
		{"AListNotYetOver", "1. one\n\n", nil},
		// A fence ends with its closing line; the blank line after it opens the next block.
		{"AFenceWithBlankLines", "```\na\n\nb\n```\n\nc", []string{"```\na\n\nb\n```\n"}},
		{"AnOpenFence", "```\na\n\nb\n", nil},
		{"ATildeFence", "~~~~\n```\n\n~~~~\n\n", []string{"~~~~\n```\n\n~~~~\n"}},
		{"BlankLinesFirst", "\n\nHi\n\n", []string{"\n\nHi\n\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mdblock.Blocks(tc.src, false); !slices.Equal(got, tc.want) {
				t.Errorf("mdblock.Blocks(%q) = %q, want %q", tc.src, got, tc.want)
			}
			if got := strings.Join(mdblock.Blocks(tc.src, true), ""); got != tc.src && strings.TrimSpace(tc.src) != "" {
				t.Errorf("final blocks join to %q, want all of %q", got, tc.src)
			}
		})
	}
}
