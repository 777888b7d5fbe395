package domain

import "time"

// A2AClient is a program that calls Parley's agents over A2A with a token of its own: the
// tasks it creates are its own (other clients do not find them), and the audit log names it.
// Only a hash of its token is kept.
type A2AClient struct {
	ID       int64
	Name     string
	Created  time.Time
	LastUsed time.Time // zero until first used
	Revoked  time.Time // zero while its token is good
}

// Via is how answers and the audit log name the client ("a2a client ci-nightly").
func (c A2AClient) Via() string { return "a2a client " + c.Name }

// LegacyA2AClient is the client of the one shared token of older Parleys (PARLEY_A2A_TOKEN):
// it owns the tasks made before clients had tokens of their own. No other client takes its
// name.
const LegacyA2AClient = "default"
