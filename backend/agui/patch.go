package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// applyPatch applies an RFC 6902 patch to a JSON document (decoded with UseNumber) and
// returns the new document; the old one is left as it was.
func applyPatch(doc any, ops []patchOp) (any, error) {
	doc = deepCopy(doc)
	for i, op := range ops {
		var err error
		switch op.Op {
		case "add":
			var v any
			if v, err = decodeValue(op.Value); err == nil {
				doc, err = addAt(doc, op.Path, v)
			}
		case "remove":
			doc, _, err = removeAt(doc, op.Path)
		case "replace":
			var v any
			if v, err = decodeValue(op.Value); err == nil {
				if doc, _, err = removeAt(doc, op.Path); err == nil {
					doc, err = addAt(doc, op.Path, v)
				}
			}
		case "move":
			if strings.HasPrefix(op.Path, op.From+"/") {
				err = fmt.Errorf("cannot move %q into itself", op.From)
				break
			}
			var v any
			if doc, v, err = removeAt(doc, op.From); err == nil {
				doc, err = addAt(doc, op.Path, v)
			}
		case "copy":
			var v any
			if v, err = getAt(doc, op.From); err == nil {
				doc, err = addAt(doc, op.Path, deepCopy(v))
			}
		case "test":
			var want, got any
			if want, err = decodeValue(op.Value); err == nil {
				if got, err = getAt(doc, op.Path); err == nil && !jsonEqual(got, want) {
					err = fmt.Errorf("test failed at %q", op.Path)
				}
			}
		default:
			err = fmt.Errorf("unknown op %q", op.Op)
		}
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s %s): %w", i+1, op.Op, op.Path, err)
		}
	}
	return doc, nil
}

func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// tokens splits a JSON Pointer into its reference tokens, unescaped.
func tokens(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(p[1:], "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

func getAt(doc any, path string) (any, error) {
	cur := doc
	for _, t := range tokens(path) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("%q does not exist", path)
			}
			cur = v
		case []any:
			i, err := index(t, len(c)-1)
			if err != nil {
				return nil, err
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q does not exist", path)
		}
	}
	return cur, nil
}

// index reads an array index no greater than max.
func index(t string, max int) (int, error) {
	i, err := strconv.Atoi(t)
	if err != nil || strings.Trim(t, "0123456789") != "" || i > max || (len(t) > 1 && t[0] == '0') {
		return 0, fmt.Errorf("%q is not an index of the array", t)
	}
	return i, nil
}

// parentOf returns the container the last token of path refers into.
func parentOf(doc any, path string) (parent any, last string, err error) {
	toks := tokens(path)
	if len(toks) == 0 {
		return nil, "", nil
	}
	prefix := ""
	for _, t := range toks[:len(toks)-1] {
		prefix += "/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	parent, err = getAt(doc, prefix)
	return parent, toks[len(toks)-1], err
}

func addAt(doc any, path string, v any) (any, error) {
	if path == "" {
		return v, nil
	}
	parent, last, err := parentOf(doc, path)
	if err != nil {
		return nil, err
	}
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
	case []any:
		i := len(c)
		if last != "-" {
			if i, err = index(last, len(c)); err != nil {
				return nil, err
			}
		}
		c = append(c, nil)
		copy(c[i+1:], c[i:])
		c[i] = v
		return setAt(doc, path, c)
	default:
		return nil, fmt.Errorf("the parent of %q is not an object or an array", path)
	}
	return doc, nil
}

// setAt puts a grown array back where its parent holds it.
func setAt(doc any, path string, arr []any) (any, error) {
	toks := tokens(path)
	if len(toks) == 1 {
		return arr, nil
	}
	grand, key, err := parentOf(doc, path[:strings.LastIndex(path, "/")])
	if err != nil {
		return nil, err
	}
	switch g := grand.(type) {
	case map[string]any:
		g[key] = arr
	case []any:
		i, err := index(key, len(g)-1)
		if err != nil {
			return nil, err
		}
		g[i] = arr
	}
	return doc, nil
}

func removeAt(doc any, path string) (any, any, error) {
	if path == "" {
		return nil, doc, nil
	}
	parent, last, err := parentOf(doc, path)
	if err != nil {
		return nil, nil, err
	}
	switch c := parent.(type) {
	case map[string]any:
		v, ok := c[last]
		if !ok {
			return nil, nil, fmt.Errorf("%q does not exist", path)
		}
		delete(c, last)
		return doc, v, nil
	case []any:
		i, err := index(last, len(c)-1)
		if err != nil {
			return nil, nil, err
		}
		v := c[i]
		c = append(c[:i:i], c[i+1:]...)
		doc, err = setAt(doc, path, c)
		return doc, v, err
	}
	return nil, nil, fmt.Errorf("%q does not exist", path)
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// jsonEqual compares two decoded documents, numbers by value.
func jsonEqual(a, b any) bool {
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok && bok {
		fa, _ := na.Float64()
		fb, _ := nb.Float64()
		return fa == fb
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
