package domain

// Capacity is how a person stands in a conversation: its owner writes and answers; staff
// read it, and where the operator lets them (StaffAnswer) answer its owner's questions on
// the owner's behalf; anyone else has no part in it.
type Capacity struct {
	// Owner says the person owns the conversation.
	Owner bool
	// Reads says they may read it (its owner, or staff).
	Reads bool
	// OnBehalfOf is the owner staff answer for, when they may ("nobody" for a conversation
	// of no account).
	OnBehalfOf string
}

// CapacityIn is u's Capacity in conversation c; staffAnswer says staff may answer for owners.
func CapacityIn(u User, c Conversation, staffAnswer bool) Capacity {
	k := Capacity{Owner: u.CanWrite(c), Reads: u.CanRead(c)}
	if !k.Owner && k.Reads && staffAnswer && u.IsStaff() {
		k.OnBehalfOf = c.Owner
		if k.OnBehalfOf == "" {
			k.OnBehalfOf = "nobody"
		}
	}
	return k
}

// AnswererFacts are what is known when a person would resolve (answer, decline, cancel) a
// question: the question and its conversation, who they are, whether the question is put to
// them (a group's they are in, an approval routed to them, an escalation to them), and
// whether staff may answer for owners.
type AnswererFacts struct {
	Question     Question
	Conversation Conversation
	By           User
	ForThem      bool
	StaffAnswer  bool
}

// Answerer is how a person may resolve a question: as one it is put to (ForThem), on its
// owner's behalf (staff, OnBehalfOf), or as its owner.
type Answerer struct {
	ForThem bool
	Capacity
}

// MayResolve is the one rule of who may resolve a question, decided once per request:
//   - a routed question (a group's, an agent's approvers') is never its conversation owner's,
//     on whose behalf it was asked, even as a member: the refusal says whose it is;
//   - one put to the person is theirs;
//   - one in a conversation they may not read does not exist for them (ENOTFOUND);
//   - a routed question is its people's alone, not staff's on anyone's behalf;
//   - staff answer an owner's question only where the operator lets them.
func MayResolve(f AnswererFacts) (Answerer, error) {
	q, c, u := f.Question, f.Conversation, f.By
	k := CapacityIn(u, c, f.StaffAnswer)
	switch {
	case q.Routed() && k.Owner:
		return Answerer{}, CheckAnswerer(q, User{ID: c.UserID, Name: c.Owner}, Actor{Name: u.Name, UserID: u.ID})
	case f.ForThem:
		return Answerer{ForThem: true, Capacity: Capacity{Reads: k.Reads}}, nil
	case !k.Reads:
		return Answerer{}, QuestionNotFound(q.ID)
	case q.Routed():
		return Answerer{}, Errorf(EFORBIDDEN, "This question is for %s: they answer it.", q.Audience().Words())
	case !k.Owner && k.OnBehalfOf == "":
		return Answerer{}, Errorf(EFORBIDDEN, "Staff read other people's questions; answering for them is turned off.")
	}
	return Answerer{Capacity: k}, nil
}
