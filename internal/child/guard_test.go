package child

import (
	"os/exec"
	"testing"
)

func TestAGuardedChildEndsWithItsInput(t *testing.T) {
	cmd := exec.Command("cat")
	Guard(cmd)
	OwnGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if cmd.Args[1] != "/usr/bin/cat" && cmd.Args[1] != "/bin/cat" {
		t.Errorf("args = %q, want the guard to run cat", cmd.Args)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the guard ended with %v, want cat's own exit", err)
	}
}

func TestAGuardEndsAsItsChildDid(t *testing.T) {
	for _, c := range []struct{ script, want string }{{"exit 3", "exit status 3"}, {"kill -9 $$", "signal: killed"}} {
		cmd := exec.Command("/bin/sh", "-c", c.script)
		Guard(cmd)
		OwnGroup(cmd)
		if err := cmd.Run(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.script, err, c.want)
		}
	}
}

func TestACommandThatIsNotThereIsNotGuarded(t *testing.T) {
	cmd := exec.Command("/nonexistent/agent")
	Guard(cmd)
	if err := cmd.Start(); err == nil || cmd.Path != "/nonexistent/agent" {
		t.Fatalf("start = %v (path %s), want the command's own error", err, cmd.Path)
	}
}
