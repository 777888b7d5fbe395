// Package assetmin minifies Parley's stylesheets and scripts. `go generate ./static` writes
// what it makes (cmd/static-minify), and the tests of static check that what is embedded is
// what it makes of the files people edit.
package assetmin

import (
	"bytes"
	"fmt"
	"path"

	"github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/css"
	"github.com/tdewolff/minify/v2/js"
)

// jsVersion is the newest ECMAScript the minified scripts may use: what the scripts are
// written in (optional chaining is 2020), nothing newer.
const jsVersion = 2020

var types = map[string]string{".css": "text/css", ".js": "text/javascript"}

// Minify returns src, the file called name (.css or .js), minified. It is deterministic:
// the same source always gives the same bytes.
func Minify(name string, src []byte) ([]byte, error) {
	t, ok := types[path.Ext(name)]
	if !ok {
		return nil, fmt.Errorf("minify %s: not a stylesheet or a script", name)
	}
	m := minify.New()
	m.Add("text/css", &css.Minifier{})
	m.Add("text/javascript", &js.Minifier{Version: jsVersion})
	var out bytes.Buffer
	if err := m.Minify(t, &out, bytes.NewReader(src)); err != nil {
		return nil, fmt.Errorf("minify %s: %w", name, err)
	}
	return out.Bytes(), nil
}
