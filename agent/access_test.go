package agent_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/agent"
)

func TestParseAccess(t *testing.T) {
	tests := []struct {
		name    string
		list    []string
		want    agent.Access
		wantErr string
	}{
		{"Everyone", []string{"everyone"}, agent.Access{"everyone"}, ""},
		{"Mixed", []string{" Staff", "group:ops", "person:ann", "group:ops"}, agent.Access{"staff", "group:ops", "person:ann"}, ""},
		{"GroupKeepsItsCase", []string{"group:Ops-EU"}, agent.Access{"group:Ops-EU"}, ""},
		{"Empty", []string{}, nil, "access is empty"},
		{"Unknown", []string{"admins"}, nil, `use "everyone"`},
		{"EveryoneWithName", []string{"everyone:ann"}, nil, "takes no name"},
		{"BadGroup", []string{"group:o ps"}, nil, "letters, digits"},
		{"NoGroupName", []string{"group:"}, nil, "1 to 64"},
		{"BadPerson", []string{"person:a/b"}, nil, "letters, digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.ParseAccess(tt.list)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestAccess_Allows(t *testing.T) {
	ann := agent.Person{User: agent.User{ID: 1, Name: "ann", Role: agent.RoleUser}, Groups: []string{"Ops"}}
	bob := agent.Person{User: agent.User{ID: 2, Name: "bob", Role: agent.RoleUser}}
	carol := agent.Person{User: agent.User{ID: 3, Name: "carol", Role: agent.RoleStaff}}
	a2a := agent.Person{User: agent.User{ID: 4, Name: "a2a", Role: agent.RoleService}}
	nobody := agent.Person{}
	tests := []struct {
		name   string
		access agent.Access
		who    agent.Person
		want   bool
	}{
		{"EveryoneLetsAPersonIn", agent.Everyone, bob, true},
		{"EveryoneLetsA2AIn", agent.Everyone, a2a, true},
		{"NobodySignedInIsNeverIn", agent.Everyone, nobody, false},
		{"StaffOnlyKeepsAPersonOut", agent.StaffOnly, ann, false},
		{"StaffUseEveryAgent", agent.Access{"group:ops"}, carol, true},
		{"AMemberOfTheGroupAnyCase", agent.Access{"group:ops"}, ann, true},
		{"NotAMember", agent.Access{"group:ops"}, bob, false},
		{"ThePersonNamed", agent.Access{"person:BOB"}, bob, true},
		{"AnotherPerson", agent.Access{"person:bob"}, ann, false},
		{"A2AByItsAccount", agent.Access{"person:a2a"}, a2a, true},
		{"A2ANotByAGroup", agent.Access{"group:ops", "staff"}, a2a, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.access.Allows(tt.who); got != tt.want {
				t.Errorf("%q allows %s: %v, want %v", tt.access, tt.who.Name, got, tt.want)
			}
		})
	}
}

func TestAccess_String(t *testing.T) {
	tests := []struct {
		access agent.Access
		want   string
	}{
		{agent.Everyone, "everyone"},
		{agent.StaffOnly, "staff"},
		{agent.Access{"group:ops"}, "the group ops and staff"},
		{agent.Access{"group:ops", "person:ann", "staff"}, "the group ops, ann and staff"},
	}
	for _, tt := range tests {
		if got := tt.access.String(); got != tt.want {
			t.Errorf("%q: %q, want %q", []string(tt.access), got, tt.want)
		}
	}
}

func TestParseAudience(t *testing.T) {
	tests := []struct {
		in      string
		want    agent.Audience
		wantErr bool
	}{
		{"group:ops", agent.Audience{Group: "ops"}, false},
		{" person:ann ", agent.Audience{Person: "ann"}, false},
		{"ops", agent.Audience{}, true},
		{"team:ops", agent.Audience{}, true},
		{"group:", agent.Audience{}, true},
	}
	for _, tt := range tests {
		got, err := agent.ParseAudience(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPolicy_Check(t *testing.T) {
	ops := agent.Audience{Group: "ops"}
	ann := agent.Audience{Person: "ann"}
	tests := []struct {
		name    string
		p       agent.Policy
		wantErr string
	}{
		{"Nothing", agent.Policy{}, ""},
		{"GroupOfTwo", agent.Policy{Approvers: ops, Approvals: 2, Timeout: time.Hour, Escalate: &agent.Escalation{After: time.Minute, To: "person:ann"}}, ""},
		{"ApprovalsOfAPerson", agent.Policy{Approvers: ann, Approvals: 2}, "needs approvers"},
		{"ApprovalsWithoutApprovers", agent.Policy{Approvals: 1}, "go with approvers"},
		{"NegativeTimeout", agent.Policy{Approvers: ops, Timeout: -time.Second}, "negative"},
		{"QuickEscalation", agent.Policy{Approvers: ops, Escalate: &agent.Escalation{After: time.Millisecond, To: "group:leads"}}, "at least 1s"},
		{"EscalateToWhom", agent.Policy{Approvers: ops, Escalate: &agent.Escalation{After: time.Minute, To: "leads"}}, "escalate_to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Check()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPolicy_Route(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	gate := agent.Question{Message: "Run deploy?", Type: agent.RequestApproval, Gate: true}
	esc := &agent.Escalation{After: 30 * time.Minute, To: "group:leads"}
	ops := agent.Policy{Approvers: agent.Audience{Group: "ops"}, Approvals: 2, Timeout: time.Hour, Escalate: esc}
	tests := []struct {
		name string
		p    agent.Policy
		q    agent.Question
		want agent.Question
	}{
		{"NoApprovers", agent.Policy{}, gate, gate},
		{"NotAGate", ops, agent.Question{Message: "Which branch?"}, agent.Question{Message: "Which branch?"}},
		{"ToTheGroup", ops, gate, agent.Question{Message: "Run deploy?", Type: agent.RequestApproval, Gate: true, To: "ops", Approvals: 2,
			Deadline: now.Add(time.Hour), Escalate: esc}},
		{"ToAPerson", agent.Policy{Approvers: agent.Audience{Person: "ann"}}, gate,
			agent.Question{Message: "Run deploy?", Type: agent.RequestApproval, Gate: true, ToPerson: "ann"}},
		{"TheSoonerDeadlineStands", agent.Policy{Approvers: agent.Audience{Person: "ann"}, Timeout: time.Hour},
			agent.Question{Gate: true, Deadline: now.Add(time.Minute)}, agent.Question{Gate: true, ToPerson: "ann", Deadline: now.Add(time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Route(tt.q, now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckAnswerer(t *testing.T) {
	approval := agent.Question{Type: agent.RequestApproval, To: "ops"}
	question := agent.Question{ToPerson: "bob"}
	tests := []struct {
		name    string
		q       agent.Question
		by      agent.Actor
		wantErr string
	}{
		{"TheOwnersOwnQuestion", agent.Question{}, agent.Actor{Name: "ann"}, ""},
		{"StaffForTheOwnersOwn", agent.Question{}, agent.Actor{Name: "carol", OnBehalfOf: "ann"}, ""},
		{"AMemberApproves", approval, agent.Actor{Name: "bob"}, ""},
		{"TheAskerNeverApproves", approval, agent.Actor{Name: "Ann"}, "asked on your behalf: the group ops approves it"},
		{"TheAskerNeverAnswers", question, agent.Actor{Name: "ann"}, "bob answers it, not you"},
		{"TheAskerByAnotherName", approval, agent.Actor{Name: "a2a client", UserID: 7}, "asked on your behalf"},
		{"NobodyOnAnothersBehalf", approval, agent.Actor{Name: "carol", OnBehalfOf: "ann"}, "on another's behalf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := agent.CheckAnswerer(tt.q, agent.User{ID: 7, Name: "ann"}, tt.by)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if err != nil && agent.ErrorCode(err) != agent.EFORBIDDEN {
				t.Errorf("code %s, want forbidden", agent.ErrorCode(err))
			}
		})
	}
}

func TestProviderGroups(t *testing.T) {
	names, refused := agent.ProviderGroups([]string{"/staff", "/eng/ops", "Data Science", "ops", "OPS", "", "a$b", "1f0c2a3e-8b7d-4c1e-9f2a-0e5d6c7b8a90"})
	want := []string{"staff", "eng.ops", "Data-Science", "ops", "1f0c2a3e-8b7d-4c1e-9f2a-0e5d6c7b8a90"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if !reflect.DeepEqual(refused, []string{"a$b"}) {
		t.Errorf("refused %q, want [a$b]", refused)
	}
}

func TestCheckUserName(t *testing.T) {
	for _, ok := range []string{"ann", "ann.smith@example.com", "a.", "Zoë", "ops-bot_2+ci"} {
		if err := agent.CheckUserName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "...", "a/b", "a b", strings.Repeat("x", 65)} {
		if err := agent.CheckUserName(bad); agent.ErrorCode(err) != agent.EINVALID {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}
