package agui

// maxEventBytes bounds one event: a state snapshot or a long tool result fits, a stream
// that never ends an event does not.
const maxEventBytes = 8 << 20
