package views

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/humantext"
)

// ToolCardID is the HTML id of a tool call's card. Keys are digits and dashes; anything
// else is dropped all the same, so that no key makes an id a selector misreads.
func ToolCardID(key string) string {
	return "tool-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return -1
	}, key)
}

// ToolItem is a tool call as the thread shows it: the call as it stands, where it appeared.
func ToolItem(ev domain.Event) Item {
	tc := *ev.ToolCall
	return Item{Kind: ItemTool, Tool: &tc, Author: ev.Author, At: ev.At}
}

// toolStatusLabel is a call's status as its badge says it.
func toolStatusLabel(tc domain.ToolCall) string {
	if tc.Status == domain.ToolWaiting {
		if tc.Waiting == "" {
			return "waiting"
		}
		return "waiting for " + tc.Waiting
	}
	return string(tc.Status)
}

// Took says how long a tool call ran, short: "340 ms", "1.2 s", "2 min 5 s".
func Took(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return Waited(d)
}

// prettyJSON indents a call's arguments for reading; what is not JSON is shown as it came.
// The escapes Go's encoder writes for <, > and & (the log stores JSON so) are undone: the
// page escapes the text itself, and people read "<b>", not "\u003cb\u003e".
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return humantext.UnescapeHTMLEscapes(b.String())
}

// imageTypes are the images a tool's result may show: raster formats a browser draws
// without running anything (never SVG).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// toolImage is the data: URL of an image part, if it is of a type shown and its data is
// base64 indeed.
func toolImage(c domain.ToolContent) (templ.SafeURL, bool) {
	if !imageTypes[c.MIME] || c.Data == "" {
		return "", false
	}
	if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
		return "", false
	}
	return templ.SafeURL("data:" + c.MIME + ";base64," + c.Data), true
}

// webLink is a URL as a link's href, if it is an absolute http or https address: other
// schemes (javascript:, data:, file:) are shown as text, never followed.
func webLink(s string) (templ.SafeURL, bool) {
	u, ok := domain.WebURL(s)
	if !ok {
		return "", false
	}
	return templ.SafeURL(u.String()), true
}

// progressNumber writes a progress value for a <progress> attribute.
func progressNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// toolSummary names a call in a line: "tool search of server docs".
func toolSummary(tc domain.ToolCall) string {
	if tc.Server == "" {
		return fmt.Sprintf("call %q of the agent", tc.Tool)
	}
	return fmt.Sprintf("tool %s of server %s", tc.Tool, tc.Server)
}

// toolOutcome is the text of a call's end for the timeline: its error, the result the
// model got (unless it only repeats the error), and the notes.
func toolOutcome(tc domain.ToolCall) string {
	var parts []string
	if tc.Error != "" {
		parts = append(parts, tc.Error)
	}
	switch {
	case tc.Result != "" && (tc.Error == "" || !strings.Contains(tc.Result, tc.Error)):
		parts = append(parts, tc.Result)
	case tc.Result == "":
		for _, c := range tc.Content {
			if c.Type == "text" || c.Type == "unsupported" {
				parts = append(parts, c.Text)
			}
		}
	}
	for _, n := range tc.Notes {
		parts = append(parts, "Note: "+n)
	}
	return strings.Join(parts, "\n\n")
}

// toolImageAlt describes an image of a tool's result for those who cannot see it.
func toolImageAlt(c domain.ToolContent) string {
	if c.Name != "" {
		return c.Name
	}
	return "An image from the tool (" + c.MIME + ")"
}

// linkText is what a resource link shows: its name, else its address.
func linkText(c domain.ToolContent) string {
	if c.Name != "" {
		return c.Name
	}
	return c.URI
}

// unsupportedText says what a part Parley does not show was.
func unsupportedText(c domain.ToolContent) string {
	if c.Text != "" {
		return c.Text
	}
	return "A part of the result of a kind Parley does not show (" + c.Type + ")."
}

// toolKindClass is a call's kind as a class name: one of ACP's kinds, else "other".
func toolKindClass(kind string) string {
	switch kind {
	case "read", "edit", "delete", "move", "search", "execute", "think", "fetch":
		return kind
	}
	return "other"
}

// diffHTML is a diff part of a tool's result: the unified diff, highlighted, in a <pre>
// that scrolls, takes the focus and has a name (as a code block's does).
func diffHTML(c domain.ToolContent) string {
	return `<pre class="chroma" tabindex="0" role="group" aria-label="Changes to ` + html.EscapeString(c.Name) + `">` +
		codeHTML([]byte("diff"), c.Text) + "</pre>"
}
