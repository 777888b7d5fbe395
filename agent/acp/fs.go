package acp

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxReadBytes bounds a file the agent reads through Parley.
const maxReadBytes = 8 << 20

// workspace is the directory the agent's sessions work in: the only place it reads and
// writes files through Parley. Paths are resolved lexically first (".." included), then
// opened through an os.Root, which follows no symbolic link out of the directory.
type workspace struct {
	dir  string   // as configured, cleaned
	real string   // with symbolic links resolved
	root *os.Root // opened on real
}

func openWorkspace(dir string) (*workspace, error) {
	dir = filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &workspace{dir: dir, real: real, root: root}, nil
}

// errOutside is why a path is refused.
var errOutside = errors.New("outside the workspace")

// rel returns path relative to the workspace, refusing one outside it. A relative path is
// taken as relative to the workspace (ACP asks for absolute ones).
func (w *workspace) rel(path string) (string, error) {
	if path == "" {
		return "", errors.New("no path given")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.dir, path)
	}
	path = filepath.Clean(path)
	for _, base := range []string{w.dir, w.real} {
		r, err := filepath.Rel(base, path)
		if err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r) {
			return r, nil
		}
	}
	return "", errOutside
}

// show is path as the person reads it: relative to the workspace when inside it.
func (w *workspace) show(path string) string {
	if r, err := w.rel(path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// read returns the text of the file at path, from line (1-based; 0 is the first) for
// limit lines (0: all), as fs/read_text_file asks.
func (w *workspace) read(path string, line, limit int) (string, error) {
	r, err := w.rel(path)
	if err != nil {
		return "", err
	}
	f, err := w.open(r, os.O_RDONLY)
	if err != nil {
		return "", explainFS(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", errors.New("it is a directory")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return "", explainFS(err)
	}
	if len(b) > maxReadBytes {
		return "", fmt.Errorf("the file is larger than %d MiB", maxReadBytes>>20)
	}
	text := string(b)
	if line <= 1 && limit <= 0 {
		return text, nil
	}
	lines := strings.SplitAfter(text, "\n")
	start := max(line-1, 0)
	if start >= len(lines) {
		return "", nil
	}
	end := len(lines)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return strings.Join(lines[start:end], ""), nil
}

// current returns the file's text before a write, and whether there was one.
func (w *workspace) current(path string) (string, bool) {
	text, err := w.read(path, 0, 0)
	return text, err == nil
}

// write replaces the file at path with content, making its directories as needed.
func (w *workspace) write(path, content string) error {
	r, err := w.rel(path)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(r); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return explainFS(err)
		}
	}
	f, err := w.open(r, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return explainFS(err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return explainFS(err)
	}
	return explainFS(f.Close())
}

// open opens the file at r (relative to the workspace) through the os.Root, which refuses
// every link that leads out. It refuses absolute links too, even those that lead to a
// place inside: such a link is resolved, checked, and the place it leads opened instead.
func (w *workspace) open(r string, flag int) (*os.File, error) {
	f, err := w.root.OpenFile(r, flag, 0o644)
	if err == nil || !strings.Contains(err.Error(), "escapes from parent") {
		return f, err
	}
	real, rerr := filepath.EvalSymlinks(filepath.Join(w.real, r))
	if rerr != nil {
		return nil, err
	}
	inside, rerr := filepath.Rel(w.real, real)
	if rerr != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
		return nil, err
	}
	return w.root.OpenFile(inside, flag, 0o644)
}

// explainFS says a file error without the path (the caller names it), and a symbolic link
// that leads out of the workspace as such.
func explainFS(err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if strings.Contains(err.Error(), "escapes from parent") {
		return fmt.Errorf("%w (through a symbolic link)", errOutside)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("no such file")
	}
	return err
}
