package layout_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/parley-chat/parley/"

// imports maps each package of the module (without the module's prefix) to the module's
// packages it imports, tests aside, as go list reports them.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-tags", "sqlite_fts5", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], module)
		m[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				m[pkg] = append(m[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	if len(m) == 0 {
		t.Fatal("go list listed no package")
	}
	return m
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestImportDirection: the domain imports nothing of Parley's; no back end imports another;
// nothing but cmd and web's own tests' helpers imports web; views knows neither the store nor
// the server; the terminal client knows only the API, and the benchmark neither the server
// nor its pages.
func TestImportDirection(t *testing.T) {
	m := imports(t)
	for _, want := range []string{"domain", "runner", "store", "web", "views"} {
		if _, ok := m[want]; !ok {
			t.Fatalf("no package %s: the layout this test holds has changed", want)
		}
	}
	for pkg, imps := range m {
		for _, imp := range imps {
			var why string
			switch {
			case pkg == "domain":
				why = "the domain imports nothing of Parley's"
			case under(pkg, "backend") && under(imp, "backend") && strings.Split(pkg, "/")[1] != strings.Split(imp, "/")[1] && !under(imp, "backend/backendtest"):
				why = "a back end imports no other back end"
			case under(imp, "web") && !under(pkg, "web") && !under(pkg, "cmd"):
				why = "only cmd imports the server"
			case under(pkg, "views") && (under(imp, "store") || under(imp, "web") || under(imp, "runner")):
				why = "views render domain values; they know neither the store, the runner nor the server"
			case under(pkg, "chat") && (under(imp, "web") || under(imp, "views") || under(imp, "store") || under(imp, "runner")):
				why = "the terminal client talks to a server over its API"
			case under(pkg, "bench") && (under(imp, "web") || under(imp, "views")):
				why = "the benchmark runs the server as a child process, and reads it as a browser would"
			case under(imp, "cmd"):
				why = "nothing imports cmd"
			}
			if why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}
