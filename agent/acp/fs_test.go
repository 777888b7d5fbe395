package acp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTheWorkspaceIsTheOnlyPlaceFilesAreReadOrWritten(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(base, "outside.txt"), []byte("secret\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("one\ntwo\nthree\n"), 0o644))
	must(t, os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(dir, "link.txt")))
	must(t, os.Symlink(base, filepath.Join(dir, "up")))
	must(t, os.Symlink(filepath.Join(dir, "src", "a.go"), filepath.Join(dir, "inner.txt")))
	w, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{
		filepath.Join(dir, "..", "outside.txt"), // a .. path
		filepath.Join(base, "outside.txt"),      // an absolute path outside
		"/etc/hostname",
		filepath.Join(dir, "link.txt"),          // a symbolic link that leads out
		filepath.Join(dir, "up", "outside.txt"), // a linked directory that leads out
		"../outside.txt",
	} {
		if text, err := w.read(path, 0, 0); !errors.Is(err, errOutside) {
			t.Errorf("read %s = %q, %v; want it refused as outside", path, text, err)
		}
	}
	for _, path := range []string{filepath.Join(dir, "..", "escaped.txt"), filepath.Join(dir, "up", "escaped.txt"), filepath.Join(dir, "link.txt")} {
		if err := w.write(path, "escaped"); !errors.Is(err, errOutside) {
			t.Errorf("write %s: %v; want it refused as outside", path, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "escaped.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written outside the workspace: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "outside.txt")); string(b) != "secret\n" {
		t.Errorf("the file outside changed: %q", b)
	}

	// Inside, reads and writes work, a link that stays inside included.
	if text, err := w.read(filepath.Join(dir, "src", "..", "src", "a.go"), 2, 1); err != nil || text != "two\n" {
		t.Errorf("read line 2 = %q, %v", text, err)
	}
	if text, err := w.read(filepath.Join(dir, "inner.txt"), 0, 0); err != nil || text != "one\ntwo\nthree\n" {
		t.Errorf("read through an inner link = %q, %v", text, err)
	}
	if err := w.write(filepath.Join(dir, "new", "deep", "b.txt"), "bee\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new", "deep", "b.txt")); err != nil || string(b) != "bee\n" {
		t.Errorf("written = %q, %v", b, err)
	}
	if _, err := w.read(filepath.Join(dir, "missing.txt"), 0, 0); err == nil || err.Error() != "no such file" {
		t.Errorf("missing file: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
