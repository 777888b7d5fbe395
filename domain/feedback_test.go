package domain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestCheckFeedback(t *testing.T) {
	listed := []string{"wrong", "unsafe", "too slow"}
	for _, c := range []struct {
		f    domain.Feedback
		want string // the cleaned reasons and comment, or the error
	}{
		{domain.Feedback{Item: domain.ItemReply, Rating: domain.RatingBad, Comment: "  Too vague.\r\n", Reasons: []string{"too slow", "wrong"}}, "[wrong too slow] Too vague."},
		{domain.Feedback{Item: domain.ItemQuestion, Rating: domain.RatingUnneeded}, "[] "},
		{domain.Feedback{Item: domain.ItemReply, Rating: domain.RatingUseful}, `A reply is rated good or bad, not "useful".`},
		{domain.Feedback{Item: domain.ItemQuestion, Rating: domain.RatingGood}, `A question is rated useful or unneeded, not "good".`},
		{domain.Feedback{Item: domain.ItemReply, Rating: domain.RatingBad, Reasons: []string{"boring"}}, `"boring" is not one of the reasons listed: wrong, unsafe, too slow.`},
		{domain.Feedback{Item: domain.ItemReply, Rating: domain.RatingBad, Comment: "no\x00"}, "The comment contains a control character (U+0000) at character 3: remove it."},
		{domain.Feedback{Item: domain.ItemReply, Rating: domain.RatingBad, Comment: strings.Repeat("x", 4001)}, "The comment must be at most 4000 characters (this has 4001)."},
	} {
		got, err := domain.CheckFeedback(c.f, listed)
		s := fmt.Sprintf("%v %s", got.Reasons, got.Comment)
		if err != nil {
			s = domain.ErrorMessage(err)
		}
		if s != c.want {
			t.Errorf("CheckFeedback(%+v) = %q; want %q", c.f, s, c.want)
		}
	}
}

func TestCheckReasons(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{" wrong \n\nunsafe\r\ntoo slow", "[wrong unsafe too slow]"},
		{"", "[]"},
		{"wrong\nwrong", `"wrong" is listed twice.`},
		{strings.Repeat("a\n", 1) + strings.Repeat("x", 61), "A reason must be at most 60 characters (this has 61)."},
		{strings.Join(strings.Fields("a b c d e f g h i j k l m"), "\n"), "At most 12 reasons: this lists 13."},
	} {
		got, err := domain.CheckReasons(c.text)
		s := fmt.Sprint(got)
		if got == nil && err == nil {
			s = "[]"
		}
		if err != nil {
			s = domain.ErrorMessage(err)
		}
		if s != c.want {
			t.Errorf("CheckReasons(%q) = %q; want %q", c.text, s, c.want)
		}
	}
}
