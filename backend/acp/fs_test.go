package acp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

func TestWritesReplaceFilesWholeAndNeverReachOutThroughLinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	must(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	// A hard link to a file outside: a write replaces the link, and the file outside stays.
	must(t, os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret\n"), 0o644))
	must(t, os.Link(filepath.Join(base, "secret.txt"), filepath.Join(dir, "hard.txt")))
	// An absolute link to a directory inside: reads and writes go through it.
	must(t, os.Symlink(filepath.Join(dir, "src"), filepath.Join(dir, "abs")))
	// A script keeps its mode when rewritten.
	must(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o750))
	// A FIFO is refused, not waited on.
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	w, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}

	must(t, w.write(filepath.Join(dir, "hard.txt"), "mine\n"))
	if b, _ := os.ReadFile(filepath.Join(base, "secret.txt")); string(b) != "secret\n" {
		t.Errorf("the file outside changed through a hard link: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hard.txt")); string(b) != "mine\n" {
		t.Errorf("hard.txt = %q", b)
	}
	must(t, w.write(filepath.Join(dir, "abs", "b.go"), "package b\n"))
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "b.go")); string(b) != "package b\n" {
		t.Errorf("a write through an absolute link inside: %q", b)
	}
	if text, err := w.read(filepath.Join(dir, "abs", "b.go"), 0, 0); err != nil || text != "package b\n" {
		t.Errorf("a read through it = %q, %v", text, err)
	}
	must(t, w.write(filepath.Join(dir, "run.sh"), "#!/bin/sh\necho hi\n"))
	if st, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("run.sh mode = %v, %v", st.Mode(), err)
	}
	if _, err := w.read(filepath.Join(dir, "pipe"), 0, 0); err == nil || err.Error() != "it is not a regular file" {
		t.Errorf("read a FIFO: %v", err)
	}
	if err := w.write(filepath.Join(dir, "pipe"), "x"); err == nil {
		t.Error("a FIFO was written")
	}
	if err := w.write(dir, "x"); err == nil {
		t.Error("the workspace itself was written")
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".parley-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
