package views

import (
	"context"
	"fmt"
	"html"
	"io"

	"github.com/a-h/templ"
)

// svgOpen is every icon's opening tag up to its class attribute: Lucide's 24-unit grid
// drawn at 20px in the text's colour, hidden from assistive technology because the control
// or text beside it carries the meaning.
const svgOpen = `<svg class="icon`

const svgAttrs = `" xmlns="http://www.w3.org/2000/svg" width="20" height="20" viewBox="0 0 24 24"` +
	` fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"` +
	` stroke-linejoin="round" aria-hidden="true" focusable="false">`

// Icon draws the Lucide icon called name as inline SVG, so that the pages use one set of
// icons and never emoji. The names are those in cmd/lucide-icons; an unknown name fails the
// render (and views' tests, which check every name the templates use).
func Icon(name string) templ.Component {
	return IconClass(name, "")
}

// IconClass draws the Lucide icon called name like Icon, with class added after "icon" for
// a size or colour of its own.
func IconClass(name, class string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		inner, ok := lucideIcons[name]
		if !ok {
			return fmt.Errorf("views: no icon %q (add it to cmd/lucide-icons)", name)
		}
		extra := ""
		if class != "" {
			extra = " " + html.EscapeString(class)
		}
		_, err := io.WriteString(w, svgOpen+extra+svgAttrs+inner+"</svg>")
		return err
	})
}
