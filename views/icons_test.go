package views

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// lucidePackage is where npm installs lucide-static, from this package's folder.
const lucidePackage = "../node_modules/lucide-static"

// svgDoc is an SVG document reduced to what draws: the root's attributes and each child
// element as its name and sorted attributes.
type svgDoc struct {
	root     map[string]string
	children []string
}

func parseSVG(t *testing.T, src string) svgDoc {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(src))
	var doc svgDoc
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse %q: %v", src, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch depth {
			case 1:
				if tok.Name.Local != "svg" {
					t.Fatalf("root <%s>, want <svg>", tok.Name.Local)
				}
				doc.root = attrs
			case 2:
				var b strings.Builder
				b.WriteString(tok.Name.Local)
				for _, k := range slices.Sorted(maps.Keys(attrs)) {
					b.WriteString(" " + k + "=" + attrs[k])
				}
				doc.children = append(doc.children, b.String())
			default:
				t.Fatalf("nested element <%s> in %q", tok.Name.Local, src)
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if strings.TrimSpace(string(tok)) != "" {
				t.Fatalf("text %q in %q", tok, src)
			}
		}
	}
	if doc.root == nil {
		t.Fatalf("no <svg> in %q", src)
	}
	return doc
}

func renderIcon(t *testing.T, name, class string) string {
	t.Helper()
	var b bytes.Buffer
	if err := IconClass(name, class).Render(context.Background(), &b); err != nil {
		t.Fatalf("render %q: %v", name, err)
	}
	return b.String()
}

func TestIcon(t *testing.T) {
	for name := range lucideIcons {
		doc := parseSVG(t, renderIcon(t, name, ""))
		for k, want := range map[string]string{
			"class": "icon", "xmlns": "http://www.w3.org/2000/svg", "viewBox": "0 0 24 24",
			"width": "20", "height": "20", "aria-hidden": "true", "focusable": "false",
			"fill": "none", "stroke": "currentColor",
		} {
			if got := doc.root[k]; got != want {
				t.Errorf("%s: %s=%q, want %q", name, k, got, want)
			}
		}
		if len(doc.children) == 0 {
			t.Errorf("%s: draws nothing", name)
		}
	}

	t.Run("Class", func(t *testing.T) {
		doc := parseSVG(t, renderIcon(t, "check", `big "x"`))
		if got, want := doc.root["class"], `icon big "x"`; got != want {
			t.Errorf("class=%q, want %q", got, want)
		}
	})

	t.Run("ErrUnknown", func(t *testing.T) {
		var b bytes.Buffer
		if err := Icon("no-such-icon").Render(context.Background(), &b); err == nil {
			t.Error("rendered an unknown icon without an error")
		}
		if b.Len() != 0 {
			t.Errorf("wrote %q for an unknown icon", b.String())
		}
	})
}

// iconCall finds the names passed to Icon and IconClass as string literals.
var iconCall = regexp.MustCompile(`\bIcon(?:Class)?\(\s*"([^"]*)"`)

// TestIcon_NamesUsed checks that every icon the templates and handlers ask for is in the
// set, so that a misspelt name fails here rather than on a page.
func TestIcon_NamesUsed(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.templ", "*.go", "../web/*.go", "../web/*/*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_templ.go") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range iconCall.FindAllStringSubmatch(string(src), -1) {
			if _, ok := lucideIcons[m[1]]; !ok {
				t.Errorf("%s: Icon(%q) is not in the set; add it to cmd/lucide-icons and rerun it", f, m[1])
			}
		}
	}
}

// TestIcon_MatchesLucide compares the committed copy with the installed lucide-static, so
// that the icons stay verbatim and a version bump without rerunning cmd/lucide-icons fails.
// CI installs node_modules before the Go tests; without it the test fails unless
// PARLEY_NO_NODE is set.
func TestIcon_MatchesLucide(t *testing.T) {
	if _, err := os.Stat(lucidePackage); errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("PARLEY_NO_NODE") != "" {
			t.Skip("PARLEY_NO_NODE is set and node_modules/lucide-static is missing")
		}
		t.Fatal("node_modules/lucide-static is missing: run `npm ci`, or set PARLEY_NO_NODE=1 to skip")
	}

	data, err := os.ReadFile(filepath.Join(lucidePackage, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != lucideVersion {
		t.Fatalf("lucide-static %s installed, icons copied from %s: rerun go run ./cmd/lucide-icons", pkg.Version, lucideVersion)
	}

	license, err := os.ReadFile(filepath.Join(lucidePackage, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile("LUCIDE_LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(license, ours) {
		t.Error("LUCIDE_LICENSE differs from lucide-static's LICENSE")
	}

	for name, inner := range lucideIcons {
		src, err := os.ReadFile(filepath.Join(lucidePackage, "icons", name+".svg"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := parseSVG(t, string(src))
		got := parseSVG(t, renderIcon(t, name, ""))
		if !slices.Equal(got.children, want.children) {
			t.Errorf("%s: embedded %q, lucide-static draws %q", name, inner, want.children)
		}
		// Our wrapper differs from Lucide's only in class, size and accessibility.
		for k, v := range want.root {
			if k == "class" || k == "width" || k == "height" {
				continue
			}
			if got.root[k] != v {
				t.Errorf("%s: <svg %s=%q>, lucide-static has %q", name, k, got.root[k], v)
			}
		}
	}
}
