package humantext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// ContextKind is what a piece of a question's context is, as people are shown it.
type ContextKind int

const (
	// CtxMarkdown is a context that is a text: the agent's Markdown, rendered sanitized.
	CtxMarkdown ContextKind = iota
	// CtxText is one value: a string, a number as people write it, Yes or No, "—" for null.
	CtxText
	// CtxList is a list of values.
	CtxList
	// CtxObject is an object: its keys, humanized and sorted, with their values.
	CtxObject
	// CtxTable is a list of objects: one row each, a column per key.
	CtxTable
)

// The limits of what a context shows, so that a huge one cannot swamp the page: deeper
// values are shown as compact JSON, longer lists, objects and tables are cut ("… 3 more"),
// and once ContextBudget values are shown, every list still open is cut where it stands.
const (
	ContextDepth   = 4
	ContextItems   = 200
	ContextColumns = 50
	ContextBudget  = 2000
	ContextJSONCut = 200
)

// ContextNode is a question's context, or a piece of it, ready to show: the one tree the
// page (views.QuestionContext) and the Markdown of the export and the terminal
// (ContextMarkdown) both walk.
type ContextNode struct {
	Kind ContextKind
	// Text is the value of a CtxText, the Markdown of a CtxMarkdown.
	Text string
	// Label names the value: its key in the object that holds it, else "Context".
	Label string
	// Folded is shown closed, under a summary: an object in an object, anything but a
	// value or a list of values in a table's cell.
	Folded bool
	// Inline is a list of values shown on one line ("a, b, c"), where it is not the whole
	// context.
	Inline  bool
	Items   []ContextNode  // CtxList
	Fields  []ContextField // CtxObject
	Columns []string       // CtxTable, humanized
	Rows    [][]ContextNode
	// More counts the items, fields or rows left out; MoreColumns a table's columns.
	More, MoreColumns int
}

// ContextField is one key of an object and its value.
type ContextField struct {
	Key   string
	Value ContextNode
}

// ContextTree makes a question's context ready to show; false when there is nothing to
// show (no context, an empty text, object or list).
func ContextTree(v any) (ContextNode, bool) {
	if v == nil {
		return ContextNode{}, false
	}
	if s, ok := v.(string); ok {
		return ContextNode{Kind: CtxMarkdown, Text: s, Label: "Context"}, strings.TrimSpace(s) != ""
	}
	norm, err := normalizeContext(v)
	if err != nil {
		// Not JSON (a NaN, a channel): shown as Go prints it, cut like a value too deep.
		return ContextNode{Kind: CtxText, Text: Cut(fmt.Sprint(v), ContextJSONCut), Label: "Context"}, true
	}
	switch x := norm.(type) {
	case nil:
		return ContextNode{}, false
	case string:
		return ContextNode{Kind: CtxMarkdown, Text: x, Label: "Context"}, strings.TrimSpace(x) != ""
	case map[string]any:
		if len(x) == 0 {
			return ContextNode{}, false
		}
	case []any:
		if len(x) == 0 {
			return ContextNode{}, false
		}
	}
	b := contextBuilder{budget: ContextBudget}
	return b.node(norm, "Context", 0, false), true
}

// normalizeContext turns what an agent gave (Go maps and slices of any type, json.Number)
// into JSON's shapes, numbers kept as written (json.Number).
func normalizeContext(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// contextBuilder walks a normalized context once, counting what it has shown.
type contextBuilder struct {
	budget int
}

// node is the value v, named label, depth levels down; inCell says it sits in a table.
func (b *contextBuilder) node(v any, label string, depth int, inCell bool) ContextNode {
	b.budget--
	if depth > ContextDepth {
		raw, _ := json.Marshal(v)
		return ContextNode{Kind: CtxText, Text: Cut(UnescapeHTMLEscapes(string(raw)), ContextJSONCut), Label: label}
	}
	switch x := v.(type) {
	case map[string]any:
		n := ContextNode{Kind: CtxObject, Label: label, Folded: depth > 0}
		keys := slices.Sorted(maps.Keys(x))
		for i, k := range keys {
			if i == ContextItems || b.budget <= 0 {
				n.More = len(keys) - i
				break
			}
			key := contextKey(k)
			n.Fields = append(n.Fields, ContextField{Key: key, Value: b.node(x[k], key, depth+1, false)})
		}
		return n
	case []any:
		if rows, ok := objects(x); ok {
			return b.table(rows, label, depth, inCell)
		}
		n := ContextNode{Kind: CtxList, Label: label}
		for i, e := range x {
			if i == ContextItems || b.budget <= 0 {
				n.More = len(x) - i
				break
			}
			n.Items = append(n.Items, b.node(e, label, depth+1, false))
		}
		// A list of values reads as one ("a, b, c"); a list holding more is folded in a cell.
		n.Inline = depth > 0 && n.scalars()
		n.Folded = inCell && !n.Inline
		return n
	}
	return ContextNode{Kind: CtxText, Text: scalarText(v), Label: label}
}

// table is a list of objects as a table: a column per key, in the order keys first appear
// (each object's sorted), each cell a value.
func (b *contextBuilder) table(rows []map[string]any, label string, depth int, inCell bool) ContextNode {
	n := ContextNode{Kind: CtxTable, Label: label, Folded: inCell}
	var keys []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range slices.Sorted(maps.Keys(r)) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) > ContextColumns {
		n.MoreColumns = len(keys) - ContextColumns
		keys = keys[:ContextColumns]
	}
	for _, k := range keys {
		n.Columns = append(n.Columns, contextKey(k))
	}
	for i, r := range rows {
		if i == ContextItems || b.budget <= 0 {
			n.More = len(rows) - i
			break
		}
		row := make([]ContextNode, len(keys))
		for j, k := range keys {
			v, ok := r[k]
			if !ok {
				row[j] = ContextNode{Kind: CtxText, Label: n.Columns[j]}
				continue
			}
			row[j] = b.node(v, n.Columns[j], depth+2, true)
		}
		n.Rows = append(n.Rows, row)
	}
	return n
}

// objects reports whether a list holds objects only, and returns them.
func objects(list []any) ([]map[string]any, bool) {
	if len(list) == 0 {
		return nil, false
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		out[i] = m
	}
	return out, true
}

// scalars reports whether a list holds single values only: it is shown as one line.
func (n ContextNode) scalars() bool {
	for _, it := range n.Items {
		if it.Kind != CtxText {
			return false
		}
	}
	return n.Kind == CtxList
}

// InlineText is a piece of the context on one line: values as they are, a list's joined by
// commas, an object's keys with their values, a table's rows one after the other.
func (n ContextNode) InlineText() string {
	var parts []string
	switch n.Kind {
	case CtxText, CtxMarkdown:
		return n.Text
	case CtxList:
		for _, it := range n.Items {
			parts = append(parts, it.InlineText())
		}
	case CtxObject:
		for _, f := range n.Fields {
			parts = append(parts, f.Key+": "+f.Value.InlineText())
		}
	case CtxTable:
		for _, r := range n.Rows {
			var cells []string
			for j, c := range r {
				if c.Text != "" || c.Kind != CtxText {
					cells = append(cells, n.Columns[j]+": "+c.InlineText())
				}
			}
			parts = append(parts, "("+strings.Join(cells, "; ")+")")
		}
	}
	if n.More > 0 {
		parts = append(parts, fmt.Sprintf("… %d more", n.More))
	}
	sep := ", "
	if n.Kind == CtxObject {
		sep = "; "
	}
	return strings.Join(parts, sep)
}

// Summary is what a folded piece says while closed: an object's first keys, a list's or a
// table's length.
func (n ContextNode) Summary() string {
	switch n.Kind {
	case CtxObject:
		var keys []string
		for i, f := range n.Fields {
			if i == 3 {
				break
			}
			keys = append(keys, f.Key)
		}
		s := strings.Join(keys, ", ")
		if rest := len(n.Fields) + n.More - len(keys); rest > 0 {
			s += fmt.Sprintf(" and %d more", rest)
		}
		if s == "" {
			return "Nothing"
		}
		return s
	case CtxList:
		return Plural(len(n.Items)+n.More, "item")
	case CtxTable:
		return Plural(len(n.Rows)+n.More, "row")
	}
	return n.Text
}

// MoreLabel says what was left out of a list, an object or a table; "" when nothing was.
func (n ContextNode) MoreLabel() string {
	var parts []string
	if n.More > 0 {
		what := map[ContextKind]string{CtxList: "item", CtxObject: "field", CtxTable: "row"}[n.Kind]
		parts = append(parts, Plural(n.More, "more "+what))
	}
	if n.MoreColumns > 0 {
		parts = append(parts, Plural(n.MoreColumns, "more column"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "… " + strings.Join(parts, " and ") + " not shown"
}

// scalarText is one value as people write it: numbers without exponent (1200, not
// 1.2e+03), Yes and No, "—" for null.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case bool:
		if x {
			return "Yes"
		}
		return "No"
	case string:
		return x
	case json.Number:
		return numberText(string(x))
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// numberText writes a JSON number as people do: an integer as it came (however long), any
// other in plain decimals.
func numberText(s string) string {
	if strings.Trim(s, "-0123456789") == "" {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// contextKey is a key as a label: humanized as field names are ("build_id" → "Build ID"),
// but a key in capitals ("SKU") is kept, and one HumanizeName cannot read is shown as is.
func contextKey(k string) string {
	if strings.TrimSpace(k) == "" {
		return "—"
	}
	if !strings.ContainsFunc(k, unicode.IsLower) {
		return k
	}
	if r, _ := utf8.DecodeRuneInString(k); r >= utf8.RuneSelf {
		return k
	}
	return domain.HumanizeName(k)
}

// Cut shortens s to about n bytes, on a rune boundary, with "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
