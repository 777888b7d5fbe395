package domain

import (
	"slices"
	"strings"
	"time"
)

// FeedbackItem is what a person gives an opinion of: an agent's reply (its agent_message
// event) or a question, once resolved.
type FeedbackItem string

const (
	ItemReply    FeedbackItem = "reply"
	ItemQuestion FeedbackItem = "question"
)

// Rating is an opinion of an item: a reply is good or bad, a question useful or unneeded
// (the agent could have known, or should not have asked).
type Rating string

const (
	RatingGood     Rating = "good"
	RatingBad      Rating = "bad"
	RatingUseful   Rating = "useful"
	RatingUnneeded Rating = "unneeded"
)

// Ratings are the ratings an item may have: its positive one first.
func (i FeedbackItem) Ratings() []Rating {
	switch i {
	case ItemReply:
		return []Rating{RatingGood, RatingBad}
	case ItemQuestion:
		return []Rating{RatingUseful, RatingUnneeded}
	}
	return nil
}

// Negative reports whether the rating says something went wrong: a bad reply, an unneeded
// question. Those bring their conversation to the review queue.
func (r Rating) Negative() bool { return r == RatingBad || r == RatingUnneeded }

// Feedback is one person's opinion of one item, as it stands: one a person an item,
// changeable, taken back by deleting it.
type Feedback struct {
	ConversationID int64
	Item           FeedbackItem
	// ItemID is the reply's event id, or the question's id.
	ItemID int64
	// By is the person's name, UserID their account.
	By     string
	UserID int64
	Rating Rating
	// Comment is what they wrote ("What was wrong?"), Reasons the reasons they ticked, of
	// those staff listed.
	Comment string
	Reasons []string
	At      time.Time
}

// FeedbackText bounds a feedback comment.
var FeedbackText = TextKind{Subject: "The comment", MaxRunes: 4000}

// MaxFeedbackReasons bounds the reasons staff list, and a person ticks.
const MaxFeedbackReasons = 12

// CheckFeedback checks an opinion of an item against the reasons staff list: a rating the
// item has, a comment within FeedbackText, reasons among the listed ones (each once). It
// returns the opinion cleaned: the comment trimmed, the reasons in the list's order.
func CheckFeedback(f Feedback, listed []string) (Feedback, error) {
	if !slices.Contains(f.Item.Ratings(), f.Rating) {
		return f, Errorf(EINVALID, "A %s is rated %s, not %q.", f.Item, ratingWords(f.Item), f.Rating)
	}
	f.Comment = strings.TrimSpace(NormalizeNewlines(f.Comment))
	if err := FeedbackText.Check(f.Comment); err != nil {
		return f, err
	}
	var reasons []string
	for _, r := range f.Reasons {
		if !slices.Contains(listed, r) {
			return f, Errorf(EINVALID, "%q is not one of the reasons listed: %s.", r, strings.Join(listed, ", "))
		}
	}
	for _, r := range listed {
		if slices.Contains(f.Reasons, r) {
			reasons = append(reasons, r)
		}
	}
	f.Reasons = reasons
	return f, nil
}

func ratingWords(i FeedbackItem) string {
	rs := i.Ratings()
	if len(rs) != 2 {
		return "nothing"
	}
	return string(rs[0]) + " or " + string(rs[1])
}

// Rateable reports whether a question that ended so may be rated: answered or declined
// (a question cancelled, superseded or expired was nobody's to judge).
func Rateable(o Outcome) bool { return o == Answered || o == Declined }

// MaxReasonRunes bounds one reason staff list.
const MaxReasonRunes = 60

// CheckReasons checks the reasons staff list, one a line of text (see CheckList).
func CheckReasons(text string) ([]string, error) {
	return CheckList(text, "A reason", MaxReasonRunes, MaxFeedbackReasons, "reasons")
}

// CheckLabels checks the labels staff keep, one a line of text (see CheckList).
func CheckLabels(text string) ([]string, error) {
	return CheckList(text, "A label", MaxLabelRunes, MaxLabels, "labels")
}

// CheckList checks a list staff keep, one item a line of text: trimmed, blank lines left
// out, each at most maxRunes characters and listed once, at most maxItems of them.
func CheckList(text, subject string, maxRunes, maxItems int, plural string) ([]string, error) {
	var out []string
	for _, line := range strings.Split(NormalizeNewlines(text), "\n") {
		r := strings.TrimSpace(line)
		if r == "" {
			continue
		}
		if err := (TextKind{Subject: subject, MaxRunes: maxRunes}).Check(r); err != nil {
			return nil, err
		}
		if slices.Contains(out, r) {
			return nil, Errorf(EINVALID, "%q is listed twice.", r)
		}
		out = append(out, r)
	}
	if len(out) > maxItems {
		return nil, Errorf(EINVALID, "At most %d %s: this lists %d.", maxItems, plural, len(out))
	}
	return out, nil
}
