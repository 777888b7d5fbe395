package acp

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	r, err = w.inside(r)
	if err != nil {
		return "", err
	}
	// Without blocking: a FIFO would hold the open until a writer came.
	f, err := w.root.OpenFile(r, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", explainFS(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", explainFS(err)
	} else if !st.Mode().IsRegular() {
		return "", errors.New("it is not a regular file")
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

// write replaces the file at path with content, making its directories as needed. The
// content goes to a new file beside it, renamed over it once whole: a write that fails
// leaves the old file as it was, and a hard link to a file elsewhere is replaced, not
// written through. A file that was there keeps its permissions.
func (w *workspace) write(path, content string) error {
	r, err := w.rel(path)
	if err != nil {
		return err
	}
	if r, err = w.inside(r); err != nil {
		return err
	}
	if r == "." {
		return errors.New("it is the workspace itself")
	}
	dir := filepath.Dir(r)
	if dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return explainFS(err)
		}
	}
	mode := os.FileMode(0o644)
	switch st, err := w.root.Stat(r); {
	case err == nil && !st.Mode().IsRegular():
		return errors.New("it is not a regular file")
	case err == nil:
		mode = st.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return explainFS(err)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.parley-%d", filepath.Base(r), rand.Uint64()))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return explainFS(err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.root.Chmod(tmp, mode) // past the umask, as the file had it
	}
	if err == nil {
		err = w.root.Rename(tmp, r)
	}
	if err != nil {
		_ = w.root.Remove(tmp)
		return explainFS(err)
	}
	return nil
}

// inside returns r (relative to the workspace) with the symbolic links of the part that
// exists resolved where they lead, if that is inside: the os.Root follows relative links
// that stay inside, but refuses absolute ones even then. A link that leads out is left
// for the os.Root to refuse.
func (w *workspace) inside(r string) (string, error) {
	full := filepath.Join(w.real, r)
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(full)
		if err == nil {
			in, err := filepath.Rel(w.real, real)
			if err != nil || in == ".." || strings.HasPrefix(in, ".."+string(filepath.Separator)) {
				return r, nil
			}
			return filepath.Join(in, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || full == w.real {
			return r, nil
		}
		rest = filepath.Join(filepath.Base(full), rest)
		full = filepath.Dir(full)
	}
}

// errNoFile is why a file that is not there cannot be read.
var errNoFile = errors.New("no such file")

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
		return errNoFile
	}
	return err
}
