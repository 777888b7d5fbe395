package chat

import (
	"fmt"
	"strings"
	"testing"
)

func TestChatUsage_ListsEveryExitCode(t *testing.T) {
	usage := strings.Join(strings.Fields(chatUsage), " ")
	for _, code := range []int{ExitNoScript, ExitRejected, ExitRunFailed, ExitLeftOver, ExitInterrupt, ExitTerminate} {
		if !strings.Contains(usage, fmt.Sprintf("; %d ", code)) {
			t.Errorf("chat -h does not list exit code %d", code)
		}
	}
}
