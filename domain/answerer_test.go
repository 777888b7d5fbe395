package domain_test

import (
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestMayResolve(t *testing.T) {
	ann := domain.User{ID: 1, Name: "ann", Role: domain.RoleUser}
	bob := domain.User{ID: 2, Name: "bob", Role: domain.RoleUser}
	sue := domain.User{ID: 3, Name: "sue", Role: domain.RoleStaff}
	annsConv := domain.Conversation{ID: 7, UserID: ann.ID, Owner: "ann"}
	own := domain.Question{ID: 9, Message: "Which venue?"}
	group := domain.Question{ID: 9, Message: "Deploy?", To: "ops"}
	approval := domain.Question{ID: 9, Message: "Deploy?", ToPerson: "bob", Type: domain.RequestApproval}
	for _, tc := range []struct {
		name        string
		q           domain.Question
		by          domain.User
		forThem     bool
		staffAnswer bool
		wantCode    string
		want        domain.Answerer
	}{
		{"the owner answers their own question", own, ann, false, false, "", domain.Answerer{Capacity: domain.Capacity{Owner: true, Reads: true}}},
		{"another person finds nothing", own, bob, false, false, domain.ENOTFOUND, domain.Answerer{}},
		{"staff may not answer when it is turned off", own, sue, false, false, domain.EFORBIDDEN, domain.Answerer{}},
		{"staff answer on the owner's behalf when allowed", own, sue, false, true, "", domain.Answerer{Capacity: domain.Capacity{Reads: true, OnBehalfOf: "ann"}}},
		{"a group's question is its member's", group, bob, true, false, "", domain.Answerer{ForThem: true}},
		{"a group's question is not its asker's, even as a member", group, ann, true, false, domain.EFORBIDDEN, domain.Answerer{}},
		{"an approval is not its asker's", approval, ann, false, false, domain.EFORBIDDEN, domain.Answerer{}},
		{"an approval is its approver's", approval, bob, true, false, "", domain.Answerer{ForThem: true}},
		{"staff do not answer a group's question for anyone", group, sue, false, true, domain.EFORBIDDEN, domain.Answerer{}},
		{"staff put in the group answer as members", group, sue, true, true, "", domain.Answerer{ForThem: true, Capacity: domain.Capacity{Reads: true}}},
		{"a stranger to a group's question finds nothing", group, bob, false, false, domain.ENOTFOUND, domain.Answerer{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domain.MayResolve(domain.AnswererFacts{Question: tc.q, Conversation: annsConv, By: tc.by, ForThem: tc.forThem, StaffAnswer: tc.staffAnswer})
			if code := domain.ErrorCode(err); code != tc.wantCode {
				t.Fatalf("error %q (%v), want %q", code, err, tc.wantCode)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCapacityIn_ConversationOfNoAccount(t *testing.T) {
	sue := domain.User{ID: 3, Name: "sue", Role: domain.RoleStaff}
	if got := domain.CapacityIn(sue, domain.Conversation{ID: 1}, true); got.OnBehalfOf != "nobody" || got.Owner || !got.Reads {
		t.Errorf("staff in a conversation of no account: %+v", got)
	}
}
