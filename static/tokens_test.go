package static

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tokens reads app.css's colour tokens: name → the light theme's colour and the dark one's.
func tokens(t *testing.T, css string) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, m := range regexp.MustCompile(`(--[a-z0-9-]+):\s*light-dark\(\s*(#[0-9a-f]{6})\s*,\s*(#[0-9a-f]{6})\s*\)`).FindAllStringSubmatch(css, -1) {
		out[m[1]] = [2]string{m[2], m[3]}
	}
	if len(out) < 20 {
		t.Fatalf("app.css has %d colour tokens; want the palette (light-dark pairs of #rrggbb)", len(out))
	}
	return out
}

// luminance is a colour's relative luminance (WCAG 2).
func luminance(hex string) float64 {
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		s := float64(v) / 255
		if s <= 0.04045 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// TestTokens_Contrast holds the palette to WCAG in both themes: body text AAA on every
// surface, other text AA on the ground it is drawn on, controls' edges and the focus ring 3:1.
func TestTokens_Contrast(t *testing.T) {
	css := readCSS(t)
	tok := tokens(t, css)
	surfaces := []string{"--bg", "--card", "--raised", "--sidebar-bg", "--field", "--user-bg", "--code-bg"}
	type pair struct {
		fg, bg string
		min    float64
	}
	var pairs []pair
	for _, s := range surfaces {
		pairs = append(pairs, pair{"--ink", s, 7}, pair{"--muted", s, 4.5}, pair{"--accent", s, 4.5})
	}
	pairs = append(pairs,
		pair{"--ink", "--chip", 7}, pair{"--muted", "--chip", 4.5},
		pair{"--accent-ink", "--accent", 4.5}, pair{"--accent-ink", "--accent-strong", 4.5},
		pair{"--accent", "--accent-soft", 4.5}, pair{"--ink", "--accent-soft", 7},
		pair{"--warn", "--warn-soft", 4.5}, pair{"--bad", "--bad-soft", 4.5}, pair{"--good", "--good-soft", 4.5},
		pair{"--warn", "--card", 4.5}, pair{"--bad", "--card", 4.5}, pair{"--good", "--card", 4.5},
		pair{"--field-line", "--field", 3}, pair{"--field-line", "--card", 3},
		pair{"--accent", "--bg", 3}, pair{"--accent", "--card", 3}, // the focus ring
	)
	for theme, name := range []string{"light", "dark"} {
		for _, p := range pairs {
			fg, ok1 := tok[p.fg]
			bg, ok2 := tok[p.bg]
			if !ok1 || !ok2 {
				t.Fatalf("no token %s or %s", p.fg, p.bg)
			}
			if c := contrast(fg[theme], bg[theme]); c < p.min {
				t.Errorf("%s: %s (%s) on %s (%s) has contrast %.2f; want at least %.1f", name, p.fg, fg[theme], p.bg, bg[theme], c, p.min)
			}
		}
	}
}

// TestTokens_NoOneOffValues: outside the tokens, colours, type sizes, families, radii,
// shadows and spacing come from the tokens, in app.css's rules and thread.css's, so that
// every page shares one scale.
func TestTokens_NoOneOffValues(t *testing.T) {
	css := readCSS(t)
	end := strings.Index(css, ":root[data-theme=dark]")
	if end < 0 {
		t.Fatal("app.css has no :root[data-theme=dark] block after its tokens")
	}
	thread, err := os.ReadFile("thread.css")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(thread), ":root") {
		t.Error("thread.css sets tokens of its own; they belong in app.css")
	}
	checkRules(t, "app.css", css[end:])
	checkRules(t, "thread.css", string(thread))
}

// checkRules fails on a value in rules (a stylesheet's text) that is not a token.
func checkRules(t *testing.T, file, rules string) {
	t.Helper()
	colour := regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|\b(rgba?|hsla?|oklch)\(`)
	decl := regexp.MustCompile(`([a-z-]+)\s*:\s*([^;{}]+)`)
	spacing := regexp.MustCompile(`^(0|auto|var\(--space-\d+\)|calc\(-1 \* var\(--space-\d+\)\)|calc\([^;]*var\(--[a-z0-9-]+\)[^;]*\))$`)
	allowed := map[string]*regexp.Regexp{
		"font-size":     regexp.MustCompile(`^(var\(--text-[a-z0-9]+\)|inherit)$`),
		"font-family":   regexp.MustCompile(`^(var\(--font-(sans|mono)\)|inherit)$`),
		"border-radius": regexp.MustCompile(`^((var\(--radius(-[a-z]+)?\)|0|50%)\s*)+$`),
		"box-shadow":    regexp.MustCompile(`^(none|((var\(--(shadow-\d|focus-ring)\)|(inset )?0 0 0 \d+px var\(--[a-z-]+\))(, )?)+)$`),
	}
	for i, line := range strings.Split(rules, "\n") {
		line = regexp.MustCompile(`/\*.*?\*/`).ReplaceAllString(line, "")
		for _, m := range decl.FindAllStringSubmatch(line, -1) {
			prop, val := m[1], strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[2]), "!important"))
			val = strings.TrimSpace(val)
			where := fmt.Sprintf("%s (rules line %d) %s: %s", file, i+1, prop, val)
			if strings.HasPrefix(prop, "--") || strings.HasSuffix(line, "{") && !strings.Contains(line, "}") && strings.Contains(m[0], ":") && !strings.Contains(line, ";") {
				continue
			}
			if prop != "mask-image" && colour.MatchString(val) {
				t.Errorf("%s: a colour of its own; use a token", where)
			}
			if re := allowed[prop]; re != nil && !re.MatchString(val) {
				t.Errorf("%s: not a token", where)
			}
			if prop == "padding" || prop == "margin" || prop == "gap" || strings.HasPrefix(prop, "padding-") || strings.HasPrefix(prop, "margin-") || strings.HasSuffix(prop, "-gap") {
				for _, part := range splitValues(val) {
					if !spacing.MatchString(part) {
						t.Errorf("%s: %q is not a space token", where, part)
					}
				}
			}
		}
	}
}

// splitValues splits a shorthand's value at the spaces outside parentheses.
func splitValues(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ' ' && depth == 0:
			if i > start {
				out = append(out, v[start:i])
			}
			start = i + 1
		}
	}
	if start < len(v) {
		out = append(out, v[start:])
	}
	return out
}

func readCSS(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("app.css") // the source people edit, not what is served

	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
