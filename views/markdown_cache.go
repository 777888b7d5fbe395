package views

import (
	"container/list"
	"sync"
)

// rendered keeps the sanitized HTML of the messages rendered lately, by their text: the page
// of a long conversation renders each message once, not at every load, and a message that
// streamed is in it already, as its stream rendered it.
var rendered = newHTMLCache(32 << 20)

// htmlCache is a least-recently-used cache of rendered Markdown, bounded in bytes.
type htmlCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *cached, most recent first
	items map[string]*list.Element
}

type cached struct{ src, html string }

func newHTMLCache(max int) *htmlCache {
	return &htmlCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *htmlCache) get(src string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[src]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).html, true
}

func (c *htmlCache) put(src, html string) {
	n := len(src) + len(html)
	if n > c.max/16 {
		return // a text that big would push out many others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[src]; ok {
		return
	}
	c.items[src] = c.order.PushFront(&cached{src, html})
	c.size += n
	for c.size > c.max {
		e := c.order.Back()
		v := c.order.Remove(e).(*cached)
		delete(c.items, v.src)
		c.size -= len(v.src) + len(v.html)
	}
}
