// Command static-minify writes the stylesheets and scripts named on its command line,
// minified, into min/ (static/min/, which is what the binary embeds and serves under the
// files' own names). The files people edit stay as they are; min/ is made at build time,
// never committed. Run it through `go generate ./static`.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parley-chat/parley/internal/assetmin"
)

const dir = "min"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "static-minify:", err)
		os.Exit(1)
	}
}

func run(names []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		out, err := assetmin.Minify(name, src)
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(dir, name), out); err != nil {
			return err
		}
		keep[name] = true
	}
	// A file no longer named would be embedded and served still.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !keep[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeIfChanged leaves an identical file alone, so that its time stays.
func writeIfChanged(name string, b []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(name, b, 0o644)
}
