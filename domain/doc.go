// Package domain is Parley's model, and imports nothing of Parley's: conversations and their
// versions, runs and the transitions between their states, the one question model (fields,
// validation of answers, approvals, audiences), people, groups and who may do what, events,
// and the errors people read.
//
// Every decision about a run's or a question's state is made here, from facts the store
// read, and written by the store as decided:
//   - transition.go: what becomes of a run after a step ends (AfterStep), a question is
//     resolved (AfterResolve), a message comes (RouteMessage), a step is interrupted, or an
//     approval is given (CheckApproval); how a run is shown (ShownState);
//   - version_change.go: in which state a run begins, whether a conversation may be
//     branched, and what leaving a version does to its runs (AfterLeave);
//   - answerer.go: who may resolve a question (MayResolve), decided once per request;
//   - access.go: who may use which agent (Access), and whom a question is for (Audience);
//   - validate.go: whether an answer is valid, with a message per field;
//   - refusals.go and errors.go: the errors people read, mapped to HTTP statuses in one
//     place at the edge (web/errors.go).
//
// It also holds the contract of back ends (Agent, Output, StepInput in agent.go) and of
// the store (Ledger in ledger.go), so that both can be written knowing only this package.
package domain
