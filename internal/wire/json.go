package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects a Scanner walks, as encoding/json does.
const maxDepth = 10000

// SyntaxError is JSON that does not parse, with the offset where it stopped.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.Offset) }

// Scanner walks one JSON value in place and decodes only the members its caller asks for:
// the rest is checked and skipped. It is lenient about types the way a reader of a stream
// from many servers must be: a member of an unexpected type (or null) reads as absent. The
// syntax is checked as it goes, and anything but white space after the value is an error.
//
//	var s wire.Scanner
//	s.Reset(data)
//	err := s.Object(func(key []byte) error {
//		if string(key) == "content" {
//			text, _ = s.String()
//		}
//		return nil // members not read are skipped
//	})
type Scanner struct {
	b     []byte
	i     int
	depth int
	err   error
}

// Reset starts on data.
func (s *Scanner) Reset(data []byte) {
	*s = Scanner{b: data}
}

// End checks that only white space follows the value read, and returns the first error met.
func (s *Scanner) End() error {
	if s.err != nil {
		return s.err
	}
	s.space()
	if s.i < len(s.b) {
		return s.fail("invalid character " + strconv.QuoteRune(rune(s.b[s.i])) + " after the value")
	}
	return nil
}

func (s *Scanner) fail(msg string) error {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.i, msg: msg}
	}
	return s.err
}

func (s *Scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value, 0 at the end.
func (s *Scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// IsObject reports whether the next value is an object.
func (s *Scanner) IsObject() bool { return s.err == nil && s.peek() == '{' }

// IsArray reports whether the next value is an array.
func (s *Scanner) IsArray() bool { return s.err == nil && s.peek() == '[' }

// IsString reports whether the next value is a string.
func (s *Scanner) IsString() bool { return s.err == nil && s.peek() == '"' }

// Object calls fn with each member's key, with the scanner at the member's value; a value fn
// does not read is skipped. A value other than an object is skipped and fn not called. An
// error of fn stops the walk and is returned.
func (s *Scanner) Object(fn func(key []byte) error) error {
	return s.walk('{', '}', func() error {
		if s.peek() != '"' {
			return s.fail("expected a member's name")
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.fail("expected ':' after a member's name")
		}
		s.i++
		return s.read(func() error { return fn(key) })
	})
}

// Array calls fn for each element, with the scanner at the element; an element fn does not
// read is skipped. A value other than an array is skipped and fn not called.
func (s *Scanner) Array(fn func() error) error {
	return s.walk('[', ']', func() error { return s.read(fn) })
}

// walk reads an object or an array, item by item, and skips any other value.
func (s *Scanner) walk(open, close byte, item func() error) error {
	if s.err != nil {
		return s.err
	}
	if s.peek() != open {
		return s.Skip()
	}
	if s.depth++; s.depth > maxDepth {
		return s.fail("nested too deep")
	}
	defer func() { s.depth-- }()
	s.i++
	if s.peek() == close {
		s.i++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return nil
		default:
			return s.fail("expected ',' or '" + string(close) + "'")
		}
	}
}

// read runs fn at a value and skips the value when fn did not read it.
func (s *Scanner) read(fn func() error) error {
	s.space()
	at := s.i
	if err := fn(); err != nil {
		return err
	}
	if s.err != nil {
		return s.err
	}
	if s.i == at {
		return s.Skip()
	}
	return nil
}

// key reads a member's name: the bytes between the quotes, unescaped only when they hold an
// escape.
func (s *Scanner) key() ([]byte, error) {
	start := s.i + 1
	end, escaped, err := s.stringEnd()
	if err != nil {
		return nil, err
	}
	if !escaped {
		return s.b[start:end], nil
	}
	return []byte(unescape(s.b[start:end])), nil
}

// String reads a string value; ok is false (and the value skipped) for any other value.
// Invalid UTF-8 reads as U+FFFD, as encoding/json reads it.
func (s *Scanner) String() (v string, ok bool) {
	if s.err != nil {
		return "", false
	}
	if s.peek() != '"' {
		s.Skip()
		return "", false
	}
	start := s.i + 1
	end, escaped, err := s.stringEnd()
	if err != nil {
		return "", false
	}
	raw := s.b[start:end]
	if escaped {
		return unescape(raw), true
	}
	if !utf8.Valid(raw) {
		return string(validUTF8(raw)), true
	}
	return string(raw), true
}

// Int reads an integer value; ok is false (and the value skipped) for any other value.
func (s *Scanner) Int() (v int64, ok bool) {
	if s.err != nil {
		return 0, false
	}
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.Skip()
		return 0, false
	}
	start := s.i
	if s.number() != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil
}

// Null reads a null; false (and nothing read) for any other value.
func (s *Scanner) Null() bool {
	if s.err == nil && s.peek() == 'n' {
		return s.literal("null") == nil
	}
	return false
}

// Raw reads any value and returns its bytes, valid as long as the data.
func (s *Scanner) Raw() ([]byte, error) {
	s.space()
	start := s.i
	if err := s.Skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// Skip reads any value, checking its syntax.
func (s *Scanner) Skip() error {
	if s.err != nil {
		return s.err
	}
	switch c := s.peek(); {
	case c == '{':
		return s.Object(func([]byte) error { return nil })
	case c == '[':
		return s.Array(func() error { return nil })
	case c == '"':
		_, _, err := s.stringEnd()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 0 && s.i >= len(s.b):
		return s.fail("unexpected end of JSON input")
	}
	return s.fail("invalid character " + strconv.QuoteRune(rune(s.b[s.i])) + " looking for a value")
}

func (s *Scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

// number reads a number as JSON writes it.
func (s *Scanner) number() error {
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.i = i
		return s.fail("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.i = i
			return s.fail("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.i = i
			return s.fail("invalid number")
		}
	}
	s.i = i
	return nil
}

// stringEnd reads a string from its opening quote and returns the offset of its closing
// quote, and whether it holds an escape; s.i ends past the closing quote.
func (s *Scanner) stringEnd() (end int, escaped bool, err error) {
	b := s.b
	i := s.i + 1
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return i, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.i = i
				return 0, false, s.fail("unexpected end of JSON input")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					s.i = i
					return 0, false, s.fail("invalid escape in a string")
				}
				i += 6
			default:
				s.i = i
				return 0, false, s.fail("invalid escape in a string")
			}
		case c < 0x20:
			s.i = i
			return 0, false, s.fail("invalid control character in a string")
		default:
			i++
		}
	}
	s.i = i
	return 0, false, s.fail("unexpected end of JSON input")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// unescape decodes the body of a string already checked by stringEnd, as encoding/json does:
// lone surrogates and invalid UTF-8 read as U+FFFD.
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, n := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r) // RuneError for invalid bytes
			i += n
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2 : i+6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return string(out)
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func validUTF8(raw []byte) []byte {
	out := make([]byte, 0, len(raw)+8)
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// Members reads a JSON object's members, each as its JSON text within data (the last of a
// name given twice, as encoding/json reads it); ok is false for anything but one object.
// The members share data's bytes.
func Members(data []byte) (m map[string]json.RawMessage, ok bool) {
	var s Scanner
	s.Reset(data)
	if !s.IsObject() {
		return nil, false
	}
	m = make(map[string]json.RawMessage, 6)
	err := s.Object(func(key []byte) error {
		v, err := s.Raw()
		m[string(key)] = v
		return err
	})
	return m, err == nil && s.End() == nil
}

// ErrNotObject is a value that had to be an object and was not.
var ErrNotObject = errors.New("not a JSON object")
