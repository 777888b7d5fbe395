package views

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/parley-chat/parley/domain"
)

// FeedbackView is the viewer's opinion of an item, as its bar shows it: two toggle buttons
// and, after a negative one, what was wrong.
type FeedbackView struct {
	ConversationID int64
	Item           domain.FeedbackItem
	ItemID         int64
	// Mine is the viewer's opinion, if they gave one; Reasons those staff list.
	Mine    *domain.Feedback
	Reasons []string
	// Open shows the form that says what was wrong; Sent thanks them for it.
	Open, Sent bool
	// Problem is what is wrong with what they sent, Comment and Checked what they typed and
	// ticked (kept on the form).
	Problem string
	Comment string
	Checked []string
}

// FeedbackKey names an item of a conversation.
type FeedbackKey struct {
	Item domain.FeedbackItem
	ID   int64
}

// Feedback is what the thread shows of opinions: the viewer's own, by item, and the reasons
// staff list. Only a viewer who rates items has one: the conversation's owner rates its
// replies (Replies) and questions, whoever a question was for rates it.
type Feedback struct {
	Mine    map[FeedbackKey]domain.Feedback
	Reasons []string
	Replies bool
}

type feedbackKey struct{}

// WithFeedback says the viewer rates the thread's items, and what they said so far.
func WithFeedback(ctx context.Context, f Feedback) context.Context {
	return context.WithValue(ctx, feedbackKey{}, f)
}

// feedbackBar is the bar of an item of the thread, when the viewer rates its items.
func feedbackBar(ctx context.Context, convID int64, item domain.FeedbackItem, id int64) (FeedbackView, bool) {
	f, ok := ctx.Value(feedbackKey{}).(Feedback)
	if !ok || id == 0 || convID == 0 || item == domain.ItemReply && !f.Replies {
		return FeedbackView{}, false
	}
	v := FeedbackView{ConversationID: convID, Item: item, ItemID: id, Reasons: f.Reasons}
	if mine, ok := f.Mine[FeedbackKey{item, id}]; ok {
		v.Mine = &mine
	}
	return v, true
}

// RatesReplies reports whether the viewer rates the thread's replies.
func RatesReplies(ctx context.Context) bool {
	f, ok := ctx.Value(feedbackKey{}).(Feedback)
	return ok && f.Replies
}

// ElementID is the bar's HTML id.
func (v FeedbackView) ElementID() string { return fmt.Sprintf("fb-%s-%d", v.Item, v.ItemID) }

// URL is where the bar posts.
func (v FeedbackView) URL() string {
	return fmt.Sprintf("/c/%d/feedback/%s/%d", v.ConversationID, v.Item, v.ItemID)
}

// pressed is a toggle's aria-pressed.
func (v FeedbackView) pressed(r domain.Rating) string {
	return fmt.Sprint(v.Mine != nil && v.Mine.Rating == r)
}

// toggle is what pressing a toggle posts: its rating, or none (taken back) when pressed.
func (v FeedbackView) toggle(r domain.Rating) string {
	to := string(r)
	if v.Mine != nil && v.Mine.Rating == r {
		to = ""
	}
	return fmt.Sprintf("@post('%s?rating=%s')", v.URL(), to)
}

// checked reports whether a reason is ticked: as typed, else as given before.
func (v FeedbackView) checked(r string) bool {
	if v.Checked != nil || v.Problem != "" {
		return slices.Contains(v.Checked, r)
	}
	return v.Mine != nil && slices.Contains(v.Mine.Reasons, r)
}

// formRating is the rating the form sends: the one given, else the item's negative one.
func (v FeedbackView) formRating() string {
	if v.Mine != nil {
		return string(v.Mine.Rating)
	}
	return string(v.Item.Ratings()[1])
}

// comment is the comment the form holds: as typed, else as given before.
func (v FeedbackView) comment() string {
	if v.Comment != "" || v.Problem != "" || v.Mine == nil {
		return v.Comment
	}
	return v.Mine.Comment
}

// RatingLabel names a toggle: "Good reply", "Unneeded question".
func RatingLabel(item domain.FeedbackItem, r domain.Rating) string {
	switch r {
	case domain.RatingGood:
		return "Good reply"
	case domain.RatingBad:
		return "Bad reply"
	case domain.RatingUseful:
		return "Useful question"
	case domain.RatingUnneeded:
		return "Unneeded question"
	}
	return string(r)
}

// groupLabel names the bar for screen readers.
func (v FeedbackView) groupLabel() string {
	return fmt.Sprintf("What you thought of this %s", v.Item)
}

func fbReasonID(v FeedbackView, i int) string {
	return v.ElementID() + "-reason-" + strconv.Itoa(i)
}
