package store_test

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// memberships are the groups the person is a member of.
func memberships(t *testing.T, db *store.DB, userID int64) []string {
	t.Helper()
	gs, err := db.MemberGroups(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func TestDB_SignInIdentity(t *testing.T) {
	const issuer = "https://id.example/realms/acme"
	t.Run("FirstSignInMakesAPersonNeverStaff", func(t *testing.T) {
		db := storetest.New(t)
		in, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "s-1", Name: "ann"}, domain.SourceOIDC)
		if err != nil || !in.Created || in.User.Role != domain.RoleUser {
			t.Fatalf("first sign-in = %+v, %v; want a new person's account", in, err)
		}
		again, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "s-1", Name: "ann-renamed"}, domain.SourceOIDC)
		if err != nil || again.Created || again.User.ID != in.User.ID || again.User.Name != "ann" {
			t.Fatalf("second sign-in = %+v, %v; want the same account, its name kept", again, err)
		}
		log, _ := db.AuditLog(ctx, 0, 10)
		var actions []string
		for _, e := range log {
			actions = append(actions, e.Action+": "+e.Detail)
		}
		if !slices.ContainsFunc(actions, func(a string) bool { return strings.Contains(a, "sign in: oidc: issuer "+issuer+", subject s-1") }) {
			t.Errorf("audit log %q lacks the sign-in with issuer and subject", actions)
		}
	})
	t.Run("ANameTakenOrLookingLikeOneIsRefusedAndNothingMade", func(t *testing.T) {
		db := storetest.New(t)
		if _, err := db.CreateUser(ctx, "root", "", domain.RoleUser); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"root", "ROOT", "rооt"} { // the last with Cyrillic о
			_, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "x-" + name, Name: name}, domain.SourceOIDC)
			if domain.ErrorCode(err) != domain.ECONFLICT {
				t.Errorf("%q: %v, want a conflict", name, err)
			}
		}
		people, _ := db.Users(ctx)
		if len(people) != 1 {
			t.Errorf("%d accounts, want the one there before", len(people))
		}
		// Nor does a refused sign-in leave its identity behind: the same subject may come
		// back with a free name.
		in, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "x-root", Name: "root2"}, domain.SourceOIDC)
		if err != nil || !in.Created {
			t.Errorf("later sign-in = %+v, %v", in, err)
		}
	})
	t.Run("StaffFollowTheStaffGroupBothWays", func(t *testing.T) {
		db := storetest.New(t)
		id := domain.Identity{Issuer: issuer, Subject: "s-2", Name: "bob", Staff: yes()}
		in, err := db.SignInIdentity(ctx, id, domain.SourceOIDC)
		if err != nil || in.User.Role != domain.RoleStaff || in.Role != domain.RoleStaff {
			t.Fatalf("sign-in in the staff group = %+v, %v", in, err)
		}
		id.Staff = no()
		if in, err = db.SignInIdentity(ctx, id, domain.SourceOIDC); err != nil || in.User.Role != domain.RoleUser {
			t.Fatalf("sign-in out of it = %+v, %v", in, err)
		}
		// Without a staff group, the role is the operator's: set-role stands.
		if _, err := db.SetRole(ctx, "bob", domain.RoleStaff, "operator"); err != nil {
			t.Fatal(err)
		}
		id.Staff = nil
		if in, err = db.SignInIdentity(ctx, id, domain.SourceOIDC); err != nil || in.User.Role != domain.RoleStaff || in.Role != "" {
			t.Fatalf("sign-in without a staff group = %+v, %v", in, err)
		}
	})
	t.Run("GroupsJoinedAndLeft", func(t *testing.T) {
		db := storetest.New(t)
		// Staff's own group, with carol in it by staff's hand.
		if _, err := db.CreateUser(ctx, "carol", "", domain.RoleStaff); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddToGroup(ctx, "oncall", []string{"carol"}, domain.RoleMember, "carol"); err != nil {
			t.Fatal(err)
		}
		id := domain.Identity{Issuer: issuer, Subject: "s-3", Name: "dan", Groups: []string{"ops", "eng.web"}}
		in, err := db.SignInIdentity(ctx, id, domain.SourceOIDC)
		if err != nil || !reflect.DeepEqual(in.Joined, []string{"ops", "eng.web"}) {
			t.Fatalf("first sign-in joined %q, %v", in.Joined, err)
		}
		if _, err := db.AddToGroup(ctx, "oncall", []string{"dan"}, domain.RoleMember, "carol"); err != nil {
			t.Fatal(err)
		}
		id.Groups = []string{"OPS", "data"}
		if in, err = db.SignInIdentity(ctx, id, domain.SourceOIDC); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in.Joined, []string{"data"}) || !reflect.DeepEqual(in.Left, []string{"eng.web"}) {
			t.Errorf("second sign-in joined %q and left %q, want [data] and [eng.web]", in.Joined, in.Left)
		}
		// oncall was staff's doing: the provider leaves it alone.
		if got := memberships(t, db, in.User.ID); !reflect.DeepEqual(got, []string{"data", "oncall", "ops"}) {
			t.Errorf("dan is in %q", got)
		}
		groups, _ := db.Groups(ctx)
		for _, g := range groups {
			if want := map[string]string{"oncall": "", "ops": domain.SourceOIDC, "data": domain.SourceOIDC, "eng.web": domain.SourceOIDC}[g.Name]; g.Source != want {
				t.Errorf("group %s from %q, want %q", g.Name, g.Source, want)
			}
		}
		// A provider that names no groups at all leaves them as they are; an empty list
		// is leaving them all.
		id.Groups = nil
		if in, err = db.SignInIdentity(ctx, id, domain.SourceOIDC); err != nil || len(in.Left) != 0 {
			t.Fatalf("no groups claim: left %q, %v", in.Left, err)
		}
		id.Groups = []string{}
		if in, err = db.SignInIdentity(ctx, id, domain.SourceOIDC); err != nil {
			t.Fatal(err)
		}
		if got := memberships(t, db, in.User.ID); !reflect.DeepEqual(got, []string{"oncall"}) {
			t.Errorf("after leaving every provider group dan is in %q, want [oncall]", got)
		}
	})
	t.Run("AServiceAccountIsNobodysToSignInAs", func(t *testing.T) {
		db := storetest.New(t)
		if _, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "s-4", Name: domain.A2AAccount}, domain.SourceOIDC); err == nil {
			t.Fatal("a sign-in took the a2a account's name")
		}
	})
	t.Run("ManyPeopleAtOnce", func(t *testing.T) {
		db := storetest.New(t)
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 20 {
			for range 2 { // each person twice at once: one account each
				wg.Go(func() {
					_, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "p" + string(rune('a'+i)), Name: "person-" + string(rune('a'+i)),
						Groups: []string{"everyone", "team-" + string(rune('a'+i%3))}}, domain.SourceOIDC)
					errs <- err
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && domain.ErrorCode(err) != domain.ECONFLICT {
				t.Error(err)
			}
		}
		people, _ := db.Users(ctx)
		if len(people) != 20 {
			t.Errorf("%d accounts, want 20", len(people))
		}
		g, err := db.Group(ctx, "everyone")
		if err != nil || len(g.People(domain.RoleMember)) != 20 {
			t.Errorf("everyone has %d members, %v", len(g.People(domain.RoleMember)), err)
		}
	})
}

func TestDB_TakeLogin(t *testing.T) {
	db := storetest.New(t)
	l := store.PendingLogin{State: "state-1", Browser: "browser-1", Nonce: "n", Verifier: "v", Next: "/c/7"}
	if err := db.StartLogin(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Run("AnotherBrowser", func(t *testing.T) {
		// Refused, and left for the browser that started it.
		if _, err := db.TakeLogin(ctx, "state-1", "browser-2"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("another browser: %v", err)
		}
	})
	t.Run("OnceOnly", func(t *testing.T) {
		got, err := db.TakeLogin(ctx, "state-1", "browser-1")
		if err != nil || got.Nonce != "n" || got.Verifier != "v" || got.Next != "/c/7" {
			t.Fatalf("take = %+v, %v", got, err)
		}
		if _, err := db.TakeLogin(ctx, "state-1", "browser-1"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("second take: %v, want not found", err)
		}
	})
	t.Run("NotIssued", func(t *testing.T) {
		if _, err := db.TakeLogin(ctx, "made-up", "browser-1"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("made-up state: %v", err)
		}
	})
	t.Run("TooOld", func(t *testing.T) {
		now := time.Now()
		db.Now = func() time.Time { return now }
		defer func() { db.Now = time.Now }()
		if err := db.StartLogin(ctx, store.PendingLogin{State: "state-2", Browser: "b"}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(store.LoginFor + time.Second)
		if _, err := db.TakeLogin(ctx, "state-2", "b"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("an old sign-in: %v", err)
		}
	})
}

func TestDB_SessionIDToken(t *testing.T) {
	db := storetest.New(t)
	u, _ := db.CreateUser(ctx, "ann", "", domain.RoleUser)
	lim := store.SessionLimits{Idle: time.Hour, Max: time.Hour}
	token, err := db.CreateSessionWith(ctx, u.ID, lim, "eyJ.id.token")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.SessionIDToken(ctx, token); err != nil || got != "eyJ.id.token" {
		t.Fatalf("id token = %q, %v", got, err)
	}
	plain, _ := db.CreateSession(ctx, u.ID, lim)
	if got, _ := db.SessionIDToken(ctx, plain); got != "" {
		t.Errorf("a password session's id token = %q", got)
	}
	if got, _ := db.SessionIDToken(ctx, "nope"); got != "" {
		t.Errorf("no session's id token = %q", got)
	}
}

// What staff gave a person stays as staff made it, whatever the provider says of the group.
func TestDB_SignInIdentity_StaffsOwnStays(t *testing.T) {
	db := storetest.New(t)
	const issuer = "https://id.example"
	in, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "e-1", Name: "eve", Groups: []string{}}, domain.SourceOIDC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddToGroup(ctx, "release", []string{"eve"}, domain.RoleAsker, "carol"); err != nil {
		t.Fatal(err)
	}
	for _, groups := range [][]string{{"release"}, {}} {
		if _, err := db.SignInIdentity(ctx, domain.Identity{Issuer: issuer, Subject: "e-1", Name: "eve", Groups: groups}, domain.SourceOIDC); err != nil {
			t.Fatal(err)
		}
		g, err := db.Group(ctx, "release")
		if err != nil || len(g.Members) != 1 || g.Members[0].Role != domain.RoleAsker || g.Members[0].Source != "" {
			t.Fatalf("after a sign-in naming %q: release is %+v, %v; want eve staff's asker still", groups, g.Members, err)
		}
	}
	_ = in
}

// An approver named in another letter case is found on both stores, in any script.
func TestDB_AskQuestion_ApproverAnyCase(t *testing.T) {
	db := storetest.New(t)
	p := people(t, db, "ann", "émile")
	q := gate()
	q.ToPerson = "Émile"
	rec := askAs(t, db, p["ann"], q)
	if !rec.Pending() {
		t.Fatalf("declined at once: %+v", rec.Resolution)
	}
	if got, _ := db.QuestionFor(ctx, rec.ID, p["émile"].ID); !got {
		t.Error("not for émile")
	}
}
