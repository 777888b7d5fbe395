package views

import (
	"bytes"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var (
	md = goldmark.New(goldmark.WithExtensions(extension.GFM))
	// policy allows the Markdown vocabulary and nothing that carries behaviour: no data-*,
	// on*, style or id attributes, no script, no iframes. Links get rel=nofollow noopener.
	policy = func() *bluemonday.Policy {
		p := bluemonday.NewPolicy()
		p.AllowStandardURLs()
		p.AllowAttrs("href").OnElements("a")
		p.RequireNoFollowOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		p.AllowImages()
		p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
			"ul", "ol", "li", "strong", "em", "del", "code", "pre", "table", "thead", "tbody",
			"tr", "th", "td", "sup", "sub", "kbd")
		p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
		p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+-]+$`)).OnElements("code")
		p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
		p.AllowAttrs("type", "checked", "disabled").OnElements("input")
		return p
	}()
)

// Markdown renders untrusted agent Markdown to sanitized HTML.
func Markdown(src string) string {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return policy.Sanitize("<p>" + src + "</p>")
	}
	return policy.Sanitize(buf.String())
}
