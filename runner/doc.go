// Package runner runs agents: it dispatches the steps the store queues to the back end of
// each conversation's agent (one at a time per conversation, leased so that one instance
// of several runs each), records what a step writes through its Output, and publishes
// events and live text to the pages and API streams that follow a conversation (the Hub).
//
// What becomes of a run is the domain's decision (domain.AfterStep, domain.AfterResolve);
// the runner acts on it: it resumes a step when its questions are answered, settles the
// steps a restart cut off, and watches deadlines and escalations.
package runner
