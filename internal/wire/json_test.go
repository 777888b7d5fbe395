package wire_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-chat/parley/internal/wire"
)

// walk reads a whole value with the Scanner: every string member and element decoded, every
// integer read, the rest skipped; it returns the strings in order.
func walk(s *wire.Scanner) []string {
	var out []string
	var value func() error
	value = func() error {
		switch {
		case s.IsObject():
			return s.Object(func(key []byte) error {
				out = append(out, "key:"+string([]rune(string(key)))) // names are matched raw
				return value()
			})
		}
		raw, err := s.Raw()
		if err != nil {
			return err
		}
		var inner wire.Scanner
		inner.Reset(raw)
		if len(raw) > 0 && raw[0] == '[' {
			return inner.Array(func() error {
				out = append(out, walk(&inner)...)
				return nil
			})
		}
		if str, ok := inner.String(); ok {
			out = append(out, str)
		}
		return nil
	}
	if value() != nil {
		return nil
	}
	return out
}

// expect is the same walk with encoding/json.
func expect(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		// encoding/json loses the order of members: the test keeps to one member per object.
		for k, e := range v {
			out = append(out, "key:"+k)
			out = append(out, expect(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, expect(e)...)
		}
	case string:
		out = append(out, v)
	}
	return out
}

// The Scanner accepts what encoding/json accepts, refuses what it refuses, and decodes
// strings as it does: escapes, surrogate pairs, lone surrogates and invalid UTF-8 included.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"content":"a\u00e9\ud83d\ude00\ud800x\"\\\/\b\f\n\r\t"}`,
		`{"a":[1,-2.5e+3,true,false,null,{"b":"c"},[]]}`,
		"{\"bad\":\"\xff\xfe\"}",
		`{"k\u0065y":{}}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `"\u12"`, `01`, `-`, `1.`, `1e`, `{"a":"\ud800\u0041"}`,
		`  {"a" : [ "x" , "y" ] }  `, `{"a":"b"} x`, `nul`, `[[[[[[]]]]]]`, "\"a\tb\"",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000)))
	f.Add([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s wire.Scanner
		s.Reset(data)
		got := walk(&s)
		err := s.End()
		if (err == nil) != json.Valid(data) {
			t.Fatalf("%q: Scanner says %v, encoding/json valid %v", data, err, json.Valid(data))
		}
		if err != nil || strings.Count(string(data), ":") > 1 {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if want := expect(v); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("%q: Scanner read %q, encoding/json %q", data, got, want)
		}
	})
}

// Members of an unexpected type read as absent, and a caller's error stops the walk.
func TestScanner_Lenient(t *testing.T) {
	var s wire.Scanner
	s.Reset([]byte(`{"n":"7","s":5,"o":[1],"i":12,"x":null}`))
	var n, i int64
	var str string
	var nOK, sOK bool
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "n":
			n, nOK = s.Int()
		case "s":
			str, sOK = s.String()
		case "o":
			return s.Object(func([]byte) error { t.Fatal("an array read as an object"); return nil })
		case "i":
			i, _ = s.Int()
		}
		return nil
	})
	if err != nil || s.End() != nil || nOK || sOK || n != 0 || str != "" || i != 12 {
		t.Fatalf("err %v; n %d %v, s %q %v, i %d", err, n, nOK, str, sOK, i)
	}
}
