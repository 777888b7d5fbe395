// Package builtin holds Parley's built-in agents: deterministic, offline back ends that
// show the whole human-in-the-loop cycle (streamed text, plans, questions, resumes) without
// a model or a network. They never act on the outside world.
package builtin

import (
	"time"

	"github.com/parley-chat/parley/domain"
)

// Options configures the built-in agents.
type Options struct {
	// Pace is the pause between streamed tokens, so that the page shows text arriving the
	// way a model's would; 0 streams as fast as the runner stores it.
	Pace time.Duration
}

// All returns every built-in agent, for registering with the runner.
func All(opts Options) []domain.Agent {
	return []domain.Agent{NewEventPlanner(opts), NewPlatformEngineer(opts)}
}
