package views

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

// contextKind is what a piece of a question's context is, as people are shown it.
type contextKind int

const (
	// ctxMarkdown is a context that is a text: the agent's Markdown, rendered sanitized.
	ctxMarkdown contextKind = iota
	// ctxText is one value: a string, a number as people write it, Yes or No, "—" for null.
	ctxText
	// ctxList is a list of values.
	ctxList
	// ctxObject is an object: its keys, humanized and sorted, with their values.
	ctxObject
	// ctxTable is a list of objects: one row each, a column per key.
	ctxTable
)

// The limits of what a context shows, so that a huge one cannot swamp the page: deeper
// values are shown as compact JSON, longer lists, objects and tables are cut ("… 3 more"),
// and once contextBudget values are shown, every list still open is cut where it stands.
const (
	contextDepth   = 4
	contextItems   = 200
	contextColumns = 50
	contextBudget  = 2000
	contextJSONCut = 200
)

// contextNode is a question's context, or a piece of it, ready to show: the one tree the
// page (QuestionContext) and the Markdown export (contextMarkdown) both walk.
type contextNode struct {
	Kind contextKind
	// Text is the value of a ctxText, the Markdown of a ctxMarkdown.
	Text string
	// Label names the value: its key in the object that holds it, else "Context".
	Label string
	// Folded is shown closed, under a summary: an object in an object, anything but a
	// value or a list of values in a table's cell.
	Folded bool
	// Inline is a list of values shown on one line ("a, b, c"), where it is not the whole
	// context.
	Inline  bool
	Items   []contextNode  // ctxList
	Fields  []contextField // ctxObject
	Columns []string       // ctxTable, humanized
	Rows    [][]contextNode
	// More counts the items, fields or rows left out; MoreColumns a table's columns.
	More, MoreColumns int
}

// contextField is one key of an object and its value.
type contextField struct {
	Key   string
	Value contextNode
}

// contextTree makes a question's context ready to show; false when there is nothing to
// show (no context, an empty text, object or list).
func contextTree(v any) (contextNode, bool) {
	if v == nil {
		return contextNode{}, false
	}
	if s, ok := v.(string); ok {
		return contextNode{Kind: ctxMarkdown, Text: s, Label: "Context"}, strings.TrimSpace(s) != ""
	}
	norm, err := normalizeContext(v)
	if err != nil {
		// Not JSON (a NaN, a channel): shown as Go prints it, cut like a value too deep.
		return contextNode{Kind: ctxText, Text: cut(fmt.Sprint(v), contextJSONCut), Label: "Context"}, true
	}
	switch x := norm.(type) {
	case nil:
		return contextNode{}, false
	case string:
		return contextNode{Kind: ctxMarkdown, Text: x, Label: "Context"}, strings.TrimSpace(x) != ""
	case map[string]any:
		if len(x) == 0 {
			return contextNode{}, false
		}
	case []any:
		if len(x) == 0 {
			return contextNode{}, false
		}
	}
	b := contextBuilder{budget: contextBudget}
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
func (b *contextBuilder) node(v any, label string, depth int, inCell bool) contextNode {
	b.budget--
	if depth > contextDepth {
		raw, _ := json.Marshal(v)
		return contextNode{Kind: ctxText, Text: cut(unescapeHTMLEscapes(string(raw)), contextJSONCut), Label: label}
	}
	switch x := v.(type) {
	case map[string]any:
		n := contextNode{Kind: ctxObject, Label: label, Folded: depth > 0}
		keys := slices.Sorted(maps.Keys(x))
		for i, k := range keys {
			if i == contextItems || b.budget <= 0 {
				n.More = len(keys) - i
				break
			}
			key := contextKey(k)
			n.Fields = append(n.Fields, contextField{Key: key, Value: b.node(x[k], key, depth+1, false)})
		}
		return n
	case []any:
		if rows, ok := objects(x); ok {
			return b.table(rows, label, depth, inCell)
		}
		n := contextNode{Kind: ctxList, Label: label}
		for i, e := range x {
			if i == contextItems || b.budget <= 0 {
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
	return contextNode{Kind: ctxText, Text: scalarText(v), Label: label}
}

// table is a list of objects as a table: a column per key, in the order keys first appear
// (each object's sorted), each cell a value.
func (b *contextBuilder) table(rows []map[string]any, label string, depth int, inCell bool) contextNode {
	n := contextNode{Kind: ctxTable, Label: label, Folded: inCell}
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
	if len(keys) > contextColumns {
		n.MoreColumns = len(keys) - contextColumns
		keys = keys[:contextColumns]
	}
	for _, k := range keys {
		n.Columns = append(n.Columns, contextKey(k))
	}
	for i, r := range rows {
		if i == contextItems || b.budget <= 0 {
			n.More = len(rows) - i
			break
		}
		row := make([]contextNode, len(keys))
		for j, k := range keys {
			v, ok := r[k]
			if !ok {
				row[j] = contextNode{Kind: ctxText, Label: n.Columns[j]}
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
func (n contextNode) scalars() bool {
	for _, it := range n.Items {
		if it.Kind != ctxText {
			return false
		}
	}
	return n.Kind == ctxList
}

// inline is a piece of the context on one line: values as they are, a list's joined by
// commas, an object's keys with their values, a table's rows one after the other.
func (n contextNode) inline() string {
	var parts []string
	switch n.Kind {
	case ctxText, ctxMarkdown:
		return n.Text
	case ctxList:
		for _, it := range n.Items {
			parts = append(parts, it.inline())
		}
	case ctxObject:
		for _, f := range n.Fields {
			parts = append(parts, f.Key+": "+f.Value.inline())
		}
	case ctxTable:
		for _, r := range n.Rows {
			var cells []string
			for j, c := range r {
				if c.Text != "" || c.Kind != ctxText {
					cells = append(cells, n.Columns[j]+": "+c.inline())
				}
			}
			parts = append(parts, "("+strings.Join(cells, "; ")+")")
		}
	}
	if n.More > 0 {
		parts = append(parts, fmt.Sprintf("… %d more", n.More))
	}
	sep := ", "
	if n.Kind == ctxObject {
		sep = "; "
	}
	return strings.Join(parts, sep)
}

// summary is what a folded piece says while closed: an object's first keys, a list's or a
// table's length.
func (n contextNode) summary() string {
	switch n.Kind {
	case ctxObject:
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
	case ctxList:
		return plural(len(n.Items)+n.More, "item")
	case ctxTable:
		return plural(len(n.Rows)+n.More, "row")
	}
	return n.Text
}

// moreLabel says what was left out of a list, an object or a table; "" when nothing was.
func (n contextNode) moreLabel() string {
	var parts []string
	if n.More > 0 {
		what := map[contextKind]string{ctxList: "item", ctxObject: "field", ctxTable: "row"}[n.Kind]
		parts = append(parts, plural(n.More, "more "+what))
	}
	if n.MoreColumns > 0 {
		parts = append(parts, plural(n.MoreColumns, "more column"))
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

// cut shortens s to about n bytes, on a rune boundary, with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
