package domain_test

import (
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestAfterLeave(t *testing.T) {
	for _, tc := range []struct {
		state domain.RunState
		want  domain.RunState
	}{
		{domain.StateWaiting, domain.StateStopped},
		{domain.StateRunning, ""},
		{domain.StateDone, ""},
		{domain.StateFailed, ""},
		{domain.StateStopped, ""},
	} {
		if got := domain.AfterLeave(tc.state); got.State != tc.want || got.SendQueued || got.Step != "" {
			t.Errorf("AfterLeave(%s) = %+v, want state %q and nothing else", tc.state, got, tc.want)
		}
	}
}

func TestCheckBranching(t *testing.T) {
	for _, tc := range []struct {
		state    domain.RunState
		b        domain.Branching
		wantCode string
	}{
		{domain.StateRunning, domain.Regenerate, domain.ECONFLICT},
		{domain.StateRunning, domain.EditMessage, domain.ECONFLICT},
		{domain.StateRunning, domain.TurnToVersion, domain.ECONFLICT},
		{domain.StateRunning, domain.SendQueued, domain.ECONFLICT},
		{domain.StateWaiting, domain.Regenerate, ""},
		{domain.StateWaiting, domain.TurnToVersion, ""},
		{domain.StateDone, domain.EditMessage, ""},
		{domain.StateFailed, domain.SendQueued, ""},
		{domain.StateStopped, domain.TurnToVersion, ""},
	} {
		if got := domain.ErrorCode(domain.CheckBranching(domain.Conversation{Kind: domain.KindChat, State: tc.state}, tc.b)); got != tc.wantCode {
			t.Errorf("CheckBranching(%s, %d) = %q, want %q", tc.state, tc.b, got, tc.wantCode)
		}
	}
	inbound := domain.Conversation{Kind: domain.KindInbound, State: domain.StateWaiting}
	for _, b := range []domain.Branching{domain.Regenerate, domain.EditMessage} {
		if got := domain.ErrorCode(domain.CheckBranching(inbound, b)); got != domain.EINVALID {
			t.Errorf("branching an inbound conversation (%d) = %q, want %q: it has no replies nor messages", b, got, domain.EINVALID)
		}
	}
	if err := domain.CheckBranching(domain.Conversation{State: domain.StateRunning}, domain.TurnToVersion); err == domain.ErrRunning {
		t.Error("turning to another version while the agent works should say why turning is refused, not that a message is")
	}
}

func TestShownState(t *testing.T) {
	for _, tc := range []struct {
		state domain.RunState
		held  int
		want  domain.RunState
	}{
		{domain.StateRunning, 0, domain.StateRunning},
		{domain.StateRunning, 1, domain.StateWaiting},
		{domain.StateRunning, 3, domain.StateWaiting},
		{domain.StateWaiting, 0, domain.StateWaiting},
		{domain.StateDone, 1, domain.StateDone},
		{domain.StateStopped, 2, domain.StateStopped},
	} {
		if got := domain.ShownState(tc.state, tc.held); got != tc.want {
			t.Errorf("ShownState(%s, %d) = %s, want %s", tc.state, tc.held, got, tc.want)
		}
	}
}
