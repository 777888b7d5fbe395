package domain_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

func TestParseAccess(t *testing.T) {
	tests := []struct {
		name    string
		list    []string
		want    domain.Access
		wantErr string
	}{
		{"Everyone", []string{"everyone"}, domain.Access{"everyone"}, ""},
		{"Mixed", []string{" Staff", "group:ops", "person:ann", "group:ops"}, domain.Access{"staff", "group:ops", "person:ann"}, ""},
		{"GroupKeepsItsCase", []string{"group:Ops-EU"}, domain.Access{"group:Ops-EU"}, ""},
		{"Empty", []string{}, nil, "access is empty"},
		{"Unknown", []string{"admins"}, nil, `use "everyone"`},
		{"EveryoneWithName", []string{"everyone:ann"}, nil, "takes no name"},
		{"BadGroup", []string{"group:o ps"}, nil, "letters, digits"},
		{"NoGroupName", []string{"group:"}, nil, "1 to 64"},
		{"BadPerson", []string{"person:a/b"}, nil, "letters, digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.ParseAccess(tt.list)
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
	ann := domain.Person{User: domain.User{ID: 1, Name: "ann", Role: domain.RoleUser}, Groups: []string{"Ops"}}
	bob := domain.Person{User: domain.User{ID: 2, Name: "bob", Role: domain.RoleUser}}
	carol := domain.Person{User: domain.User{ID: 3, Name: "carol", Role: domain.RoleStaff}}
	a2a := domain.Person{User: domain.User{ID: 4, Name: "a2a", Role: domain.RoleService}}
	nobody := domain.Person{}
	tests := []struct {
		name   string
		access domain.Access
		who    domain.Person
		want   bool
	}{
		{"EveryoneLetsAPersonIn", domain.Everyone, bob, true},
		{"EveryoneLetsA2AIn", domain.Everyone, a2a, true},
		{"NobodySignedInIsNeverIn", domain.Everyone, nobody, false},
		{"StaffOnlyKeepsAPersonOut", domain.StaffOnly, ann, false},
		{"StaffUseEveryAgent", domain.Access{"group:ops"}, carol, true},
		{"AMemberOfTheGroupAnyCase", domain.Access{"group:ops"}, ann, true},
		{"NotAMember", domain.Access{"group:ops"}, bob, false},
		{"ThePersonNamed", domain.Access{"person:BOB"}, bob, true},
		{"AnotherPerson", domain.Access{"person:bob"}, ann, false},
		{"A2AByItsAccount", domain.Access{"person:a2a"}, a2a, true},
		{"A2ANotByAGroup", domain.Access{"group:ops", "staff"}, a2a, false},
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
		access domain.Access
		want   string
	}{
		{domain.Everyone, "everyone"},
		{domain.StaffOnly, "staff"},
		{domain.Access{"group:ops"}, "the group ops and staff"},
		{domain.Access{"group:ops", "person:ann", "staff"}, "the group ops, ann and staff"},
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
		want    domain.Audience
		wantErr bool
	}{
		{"group:ops", domain.Audience{Group: "ops"}, false},
		{" person:ann ", domain.Audience{Person: "ann"}, false},
		{"ops", domain.Audience{}, true},
		{"team:ops", domain.Audience{}, true},
		{"group:", domain.Audience{}, true},
	}
	for _, tt := range tests {
		got, err := domain.ParseAudience(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPolicy_Check(t *testing.T) {
	ops := domain.Audience{Group: "ops"}
	ann := domain.Audience{Person: "ann"}
	tests := []struct {
		name    string
		p       domain.Policy
		wantErr string
	}{
		{"Nothing", domain.Policy{}, ""},
		{"GroupOfTwo", domain.Policy{Approvers: ops, Approvals: 2, Timeout: time.Hour, Escalate: &domain.Escalation{After: time.Minute, To: "person:ann"}}, ""},
		{"ApprovalsOfAPerson", domain.Policy{Approvers: ann, Approvals: 2}, "needs approvers"},
		{"ApprovalsWithoutApprovers", domain.Policy{Approvals: 1}, "go with approvers"},
		{"NegativeTimeout", domain.Policy{Approvers: ops, Timeout: -time.Second}, "negative"},
		{"QuickEscalation", domain.Policy{Approvers: ops, Escalate: &domain.Escalation{After: time.Millisecond, To: "group:leads"}}, "at least 1s"},
		{"EscalateToWhom", domain.Policy{Approvers: ops, Escalate: &domain.Escalation{After: time.Minute, To: "leads"}}, "escalate_to"},
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
	gate := domain.Question{Message: "Run deploy?", Type: domain.RequestApproval, Gate: true}
	esc := &domain.Escalation{After: 30 * time.Minute, To: "group:leads"}
	ops := domain.Policy{Approvers: domain.Audience{Group: "ops"}, Approvals: 2, Timeout: time.Hour, Escalate: esc}
	tests := []struct {
		name string
		p    domain.Policy
		q    domain.Question
		want domain.Question
	}{
		{"NoApprovers", domain.Policy{}, gate, gate},
		{"NotAGate", ops, domain.Question{Message: "Which branch?"}, domain.Question{Message: "Which branch?"}},
		{"ToTheGroup", ops, gate, domain.Question{Message: "Run deploy?", Type: domain.RequestApproval, Gate: true, To: "ops", Approvals: 2,
			Deadline: now.Add(time.Hour), Escalate: esc}},
		{"ToAPerson", domain.Policy{Approvers: domain.Audience{Person: "ann"}}, gate,
			domain.Question{Message: "Run deploy?", Type: domain.RequestApproval, Gate: true, ToPerson: "ann"}},
		{"TheSoonerDeadlineStands", domain.Policy{Approvers: domain.Audience{Person: "ann"}, Timeout: time.Hour},
			domain.Question{Gate: true, Deadline: now.Add(time.Minute)}, domain.Question{Gate: true, ToPerson: "ann", Deadline: now.Add(time.Minute)}},
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
	approval := domain.Question{Type: domain.RequestApproval, To: "ops"}
	question := domain.Question{ToPerson: "bob"}
	tests := []struct {
		name    string
		q       domain.Question
		by      domain.Actor
		wantErr string
	}{
		{"TheOwnersOwnQuestion", domain.Question{}, domain.Actor{Name: "ann"}, ""},
		{"StaffForTheOwnersOwn", domain.Question{}, domain.Actor{Name: "carol", OnBehalfOf: "ann"}, ""},
		{"AMemberApproves", approval, domain.Actor{Name: "bob"}, ""},
		{"TheAskerNeverApproves", approval, domain.Actor{Name: "Ann"}, "asked on your behalf: the group ops approves it"},
		{"TheAskerNeverAnswers", question, domain.Actor{Name: "ann"}, "bob answers it, not you"},
		{"TheAskerByAnotherName", approval, domain.Actor{Name: "a2a client", UserID: 7}, "asked on your behalf"},
		{"NobodyOnAnothersBehalf", approval, domain.Actor{Name: "carol", OnBehalfOf: "ann"}, "on another's behalf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.CheckAnswerer(tt.q, domain.User{ID: 7, Name: "ann"}, tt.by)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if err != nil && domain.ErrorCode(err) != domain.EFORBIDDEN {
				t.Errorf("code %s, want forbidden", domain.ErrorCode(err))
			}
		})
	}
}

func TestProviderGroups(t *testing.T) {
	names, refused := domain.ProviderGroups([]string{"/staff", "/eng/ops", "Data Science", "ops", "OPS", "", "a$b", "1f0c2a3e-8b7d-4c1e-9f2a-0e5d6c7b8a90"})
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
		if err := domain.CheckUserName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "...", "a/b", "a b", strings.Repeat("x", 65)} {
		if err := domain.CheckUserName(bad); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}
