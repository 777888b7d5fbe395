package domain

// The refusals a person reads, one home each: the store, the runner and the handlers return
// these, and the web layer maps their codes to HTTP statuses in one place (web/errors.go).

// ErrResolved refuses an answer, a decline or a cancel of a question resolved before (by
// someone else, another tab, a deadline or its agent).
var ErrResolved = Errorf(ECONFLICT, "This question was already resolved.")

// ErrSignIn refuses a request from nobody signed in.
var ErrSignIn = Errorf(EUNAUTHORIZED, "Sign in first.")

// ErrNotFound is the refusal of what does not exist or may not be seen, said without telling
// which of the two it is.
var ErrNotFound = Errorf(ENOTFOUND, "Not found.")

// ErrNoChannel refuses a channel that does not exist or is not the person's.
var ErrNoChannel = Errorf(ENOTFOUND, "No such channel.")

// ErrNoUser refuses an account that does not exist.
var ErrNoUser = Errorf(ENOTFOUND, "No such user.")

// QuestionNotFound refuses a question that does not exist or is not the reader's to see.
func QuestionNotFound(id int64) error { return Errorf(ENOTFOUND, "Question %d not found.", id) }

// ConversationNotFound refuses a conversation that does not exist or is not the reader's.
func ConversationNotFound(id int64) error {
	return Errorf(ENOTFOUND, "Conversation %d not found.", id)
}

// NoVersion refuses a version a conversation does not have.
func NoVersion(conversationID, version int64) error {
	return Errorf(ENOTFOUND, "Conversation %d has no version %d.", conversationID, version)
}

// NoPerson refuses a person's name that names nobody.
func NoPerson(name string) error { return Errorf(ENOTFOUND, "There is no person named %q.", name) }

// NoGroup refuses a group's name that names no group.
func NoGroup(name string) error { return Errorf(ENOTFOUND, "There is no group named %q.", name) }
