package notify

import (
	"context"
	"net/http"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// ntfy posts the question to an ntfy topic (https://docs.ntfy.sh/publish/): the message is
// the body; Title, Click (the question's page), Tags and an action button are headers, and
// the channel's access token, when it has one, goes as a bearer token.
func (n *Notifier) ntfy(ctx context.Context, d domain.Notification) error {
	link := n.Link(d.Question)
	title, body := pushText(d)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Channel.Target, strings.NewReader(body+"\n"+link))
	if err != nil {
		return permanent{err}
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", mime(title))
	req.Header.Set("Click", link)
	req.Header.Set("Tags", "question,parley")
	req.Header.Set("Actions", "view, Answer in Parley, "+link+", clear=true")
	if d.Question.Routed() || d.Reason == "escalated" {
		req.Header.Set("Priority", "high") // someone else's work waits on it
	}
	if d.Channel.Secret != "" {
		req.Header.Set("Authorization", "Bearer "+d.Channel.Secret)
	}
	return post(n.http, req, "the ntfy server")
}
