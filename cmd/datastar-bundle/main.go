// Command datastar-bundle copies the Datastar v1.0 browser client out of its Go module into
// static/, checking its hash. The client is third-party code: it is placed at build time,
// never committed. Run it through `go generate ./static`.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

const (
	module = "github.com/starfederation/datastar@v1.0.0"
	// sha256 of bundles/datastar.js in that module version.
	wantSum = "e7d6ad0e83980b37706f4494a36db3c58b5dc6cd5a9e5bd5166dbffa6b56a06a"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "datastar-bundle:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return fmt.Errorf("go mod download %s: %w", module, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("go mod download output: %w", err)
	}
	if info.Error != "" || info.Dir == "" {
		return fmt.Errorf("go mod download %s: %s", module, info.Error)
	}
	js, err := os.ReadFile(filepath.Join(info.Dir, "bundles", "datastar.js"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(js)
	if got := hex.EncodeToString(sum[:]); got != wantSum {
		return fmt.Errorf("datastar.js sha256 %s, want %s", got, wantSum)
	}
	jsMap, err := os.ReadFile(filepath.Join(info.Dir, "bundles", "datastar.js.map"))
	if err != nil {
		return err
	}
	if err := writeIfChanged("datastar.js", js); err != nil {
		return err
	}
	return writeIfChanged("datastar.js.map", jsMap)
}

// writeIfChanged writes 0644 (the module cache copy is read-only) and leaves an identical file alone.
func writeIfChanged(name string, b []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, b) {
		return nil
	}
	os.Remove(name)
	return os.WriteFile(name, b, 0o644)
}
