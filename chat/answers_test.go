package chat

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadAnswers(t *testing.T) {
	yml := writeFile(t, "a.yaml", "message: hi\nanswers:\n  - {day: 2026-05-01, n: 3, tags: [a, b], ok: true}\n  - decline: no\n  - cancel: true\n")
	s, err := loadAnswers(yml)
	if err != nil {
		t.Fatal(err)
	}
	q := apiQuestion{Question: domain.Question{Fields: []domain.Field{{Name: "day", Kind: domain.KindDate}, {Name: "n", Kind: domain.KindInteger},
		{Name: "tags", Kind: domain.KindMultiselect}, {Name: "ok", Kind: domain.KindBoolean}}}}
	got, err := s.take(q)
	want := map[string]any{"day": "2026-05-01", "n": int64(3), "tags": []any{"a", "b"}, "ok": true}
	if err != nil || !reflect.DeepEqual(got.values, want) {
		t.Fatalf("take = %#v, %v; want %#v", got.values, err, want)
	}
	if got, _ := s.take(q); got.decline == nil || *got.decline != "no" {
		t.Errorf("decline entry = %+v", got)
	}
	if got, _ := s.take(q); !got.cancel {
		t.Errorf("cancel entry = %+v", got)
	}
	if _, err := s.take(q); err != errNoScript {
		t.Errorf("after the last entry: %v, want errNoScript", err)
	}
	// A file field takes a path, relative to the answers file.
	b := writeFile(t, "b.json", `{"answers": [{"doc": "notes.txt"}]}`)
	s, _ = loadAnswers(b)
	got, err = s.take(apiQuestion{Question: domain.Question{Fields: []domain.Field{{Name: "doc", Kind: domain.KindFile}}}})
	if err != nil || got.files["doc"] != filepath.Join(filepath.Dir(b), "notes.txt") {
		t.Fatalf("file entry = %+v, %v", got, err)
	}
	for name, content := range map[string]string{"bad.json": `{"answer": []}`, "bad.yaml": "answers: [[1]]\n", "empty.yaml": "answers:\n  -\n"} {
		if _, err := loadAnswers(writeFile(t, name, content)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseChat(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "parley"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "parley", "chat.toml"), []byte("server = \"http://file:1\"\ntoken = \"parley_file\"\n"), 0o600)
	tests := []struct {
		name             string
		args             []string
		env              map[string]string
		server, token    string
		message, wantErr string
	}{
		{"config file", nil, map[string]string{"XDG_CONFIG_HOME": dir}, "http://file:1", "parley_file", "", ""},
		{"env beats file", nil, map[string]string{"XDG_CONFIG_HOME": dir, "PARLEY_SERVER": "env:2", "PARLEY_TOKEN": "parley_env"}, "http://env:2", "parley_env", "", ""},
		{"flag beats env", []string{"--server", "http://flag:3/", "hello", "--agent", "x", "there"}, map[string]string{"XDG_CONFIG_HOME": dir, "PARLEY_SERVER": "env:2"}, "http://flag:3", "parley_file", "hello there", ""},
		{"PARLEY_URL, as the API tour exports it", nil, map[string]string{"XDG_CONFIG_HOME": dir, "PARLEY_URL": "http://tour:4"}, "http://tour:4", "parley_file", "", ""},
		{"PARLEY_URL beats its older name", nil, map[string]string{"XDG_CONFIG_HOME": dir, "PARLEY_URL": "http://tour:4", "PARLEY_SERVER": "env:2"}, "http://tour:4", "parley_file", "", ""},
		{"default server", nil, map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "PARLEY_TOKEN": "parley_t"}, defaultServer, "parley_t", "", ""},
		{"no token", nil, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "", "", "", "parley token add NAME --user YOU"},
		{"missing config", []string{"--config", filepath.Join(dir, "nope.toml")}, map[string]string{"PARLEY_TOKEN": "t"}, "", "", "", "nope.toml"},
		{"two messages", []string{"--message", "a", "b"}, map[string]string{"PARLEY_TOKEN": "t"}, "", "", "", "either"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseChat(tt.args, env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || o.Server != tt.server || o.Token != tt.token || o.Message != tt.message {
				t.Fatalf("parseChat = %+v, %v; want server %q token %q message %q", o, err, tt.server, tt.token, tt.message)
			}
		})
	}
}

func TestParseInput(t *testing.T) {
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	opts := []domain.Option{{Value: "hall", Label: "Town hall"}, {Value: "park"}, {Value: "other", Label: "Something else"}}
	file := writeFile(t, "f.txt", "x")
	tests := []struct {
		field domain.Field
		in    string
		want  any
		path  string
	}{
		{domain.Field{Kind: domain.KindText}, "  hi  ", "hi", ""},
		{domain.Field{Kind: domain.KindText}, "", nil, ""},
		{domain.Field{Kind: domain.KindNumber}, "2.5", 2.5, ""},
		{domain.Field{Kind: domain.KindNumber}, "NaN", "NaN", ""},
		{domain.Field{Kind: domain.KindInteger}, "42", int64(42), ""},
		{domain.Field{Kind: domain.KindInteger}, "4.2", "4.2", ""},
		{domain.Field{Kind: domain.KindSelect, Options: opts}, "2", "park", ""},
		{domain.Field{Kind: domain.KindSelect, Options: opts}, "town HALL", "hall", ""},
		{domain.Field{Kind: domain.KindSelect, Options: opts}, "9", "9", ""},
		{domain.Field{Kind: domain.KindMultiselect, Options: opts}, "1, park,3", []string{"hall", "park", "other"}, ""},
		{domain.Field{Kind: domain.KindBoolean}, "Yes", true, ""},
		{domain.Field{Kind: domain.KindBoolean}, "n", false, ""},
		{domain.Field{Kind: domain.KindBoolean}, "maybe", "maybe", ""},
		{domain.Field{Kind: domain.KindDate}, "tomorrow", "2026-04-01", ""},
		{domain.Field{Kind: domain.KindDate}, "today", "2026-03-31", ""},
		{domain.Field{Kind: domain.KindFile}, file, nil, file},
	}
	for _, tt := range tests {
		got, path, msg := parseInput(tt.field, tt.in, now)
		if msg != "" || !reflect.DeepEqual(got, tt.want) || path != tt.path {
			t.Errorf("parseInput(%s, %q) = %#v, %q, %q; want %#v, %q", tt.field.Kind, tt.in, got, path, msg, tt.want, tt.path)
		}
	}
	if _, _, msg := parseInput(domain.Field{Kind: domain.KindFile}, filepath.Dir(file), now); msg == "" {
		t.Error("a folder was taken as a file")
	}
}

func TestFieldHint(t *testing.T) {
	one, three := 1, 3
	lo, hi := 1.0, 500.0
	tests := []struct {
		field domain.Field
		want  string
	}{
		{domain.Field{Kind: domain.KindText, MaxLength: &three}, "at most 3 characters"},
		{domain.Field{Kind: domain.KindInteger, Min: &lo, Max: &hi}, "a whole number, between 1 and 500"},
		{domain.Field{Kind: domain.KindNumber, Min: &lo}, "a number, at least 1"},
		{domain.Field{Kind: domain.KindDate, MinDate: domain.Today}, "YYYY-MM-DD (or today, tomorrow), today or later"},
		{domain.Field{Kind: domain.KindMultiselect, MinItems: &one, MaxItems: &three}, "numbers separated by commas, pick between 1 and 3"},
		{domain.Field{Kind: domain.KindText, Format: domain.FormatEmail}, "an email address"},
	}
	for _, tt := range tests {
		if got := fieldHint(tt.field); got != tt.want {
			t.Errorf("fieldHint(%+v) = %q, want %q", tt.field, got, tt.want)
		}
	}
}
