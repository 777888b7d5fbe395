// Package aguitest runs the AG-UI test agent (backend/agui/testdata/agent.mjs, built on the
// protocol's official packages @ag-ui/core and @ag-ui/encoder) beside a test.
package aguitest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/backendtest"
)

// Agent is a running test agent.
type Agent struct {
	// URL is where runs are POSTed.
	URL string
	cmd *exec.Cmd
}

// Start runs the test agent until the test ends; env is added to its environment (AGUI_TOKEN
// makes it require that bearer token). The test fails when node or the packages are missing.
func Start(t testing.TB, env ...string) *Agent {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("the AG-UI test agent needs node: %v", err)
	}
	root, err := backendtest.Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@ag-ui", "encoder")); err != nil {
		t.Fatalf("the AG-UI packages are not installed (run npm ci): %v", err)
	}
	cmd := exec.Command("node", filepath.Join(root, "backend", "agui", "testdata", "agent.mjs"), "0")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		var v struct{ URL string }
		if !ok || json.Unmarshal([]byte(l), &v) != nil || v.URL == "" {
			t.Fatalf("the AG-UI test agent did not start: %q", l)
		}
		return &Agent{URL: v.URL, cmd: cmd}
	case <-time.After(30 * time.Second):
		t.Fatal("the AG-UI test agent did not start within 30 s")
	}
	return nil
}

// Input is a RunAgentInput the agent got, as it came, and whether @ag-ui/core's
// RunAgentInputSchema accepted it.
type Input struct {
	Input map[string]any `json:"input"`
	Valid bool           `json:"valid"`
	Error string         `json:"error"`
}

// Inputs lists the inputs the agent got, oldest first.
func (a *Agent) Inputs(t testing.TB) []Input {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(a.URL, "/agent") + "/inputs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var in []Input
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		t.Fatal(err)
	}
	return in
}
