package chat

import (
	"regexp"
	"time"
)

// What the tests share; cmd/parley's tests of parley chat against a running server have
// the same.

// waitLong bounds every wait: generous, for a busy machine under -race.
const waitLong = 90 * time.Second

// ansiStyle is an escape sequence that styles text.
var ansiStyle = regexp.MustCompile("\x1b\\[[0-9;]*m")

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
