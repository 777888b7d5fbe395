package domain

import (
	"slices"
	"time"
)

// A conversation's log never loses an event: to regenerate a reply or to edit a message
// already sent, the conversation branches. Each branch is a Version: the log of the version
// it branched from up to its Fork event, then events of its own. Version 0 is the
// conversation as first written; the conversation shows one version at a time, its current
// one, and everything that reads "the conversation" (the page, the agent's history, the
// exports, search) reads that version's path.

// VersionReason says why a version was started.
type VersionReason string

// The reasons a version is started.
const (
	VersionRegenerate VersionReason = "regenerate"
	VersionEdit       VersionReason = "edit"
)

// Version is one version of a conversation.
type Version struct {
	N int64
	// Parent is the version the Fork event belongs to, Fork the last event shared with it:
	// 0 when the version shares nothing (the first message was edited).
	Parent, Fork int64
	Reason       VersionReason
	By           string
	CreatedAt    time.Time
	// ChosenAt is when the version was last shown: moving to a point where versions differ
	// shows, of each, the one last shown.
	ChosenAt time.Time
}

// Versions are a conversation's versions, version 0 included.
type Versions []Version

// Segment is a run of one version's events on a path: those with an id up to UpTo (0: all).
type Segment struct {
	Version, UpTo int64
}

// Path is the events a version shows: its segments, its own first.
type Path []Segment

// Has reports whether the event (its version, its id) is on the path.
func (p Path) Has(version, id int64) bool {
	for _, s := range p {
		if s.Version == version && (s.UpTo == 0 || id <= s.UpTo) {
			return true
		}
	}
	return false
}

// Find returns version n; version 0 always exists.
func (vs Versions) Find(n int64) (Version, bool) {
	for _, v := range vs {
		if v.N == n {
			return v, true
		}
	}
	return Version{}, n == 0
}

// Path is the path of version n.
func (vs Versions) Path(n int64) Path {
	var p Path
	var upTo int64
	for range len(vs) + 1 {
		p = append(p, Segment{n, upTo})
		v, _ := vs.Find(n)
		if n == 0 || v.Fork == 0 {
			break
		}
		n, upTo = v.Parent, v.Fork
	}
	return p
}

// Choice is a point on a version's path where versions differ: after event Fork, the
// conversation went on in each of Versions (in the order they were started), Current
// being the one on the path. Choosing another shows, of its line, the version last shown.
type Choice struct {
	Fork     int64
	Versions []int64
	Current  int
}

// Choices lists the points on version n's path where versions differ, oldest first.
func (vs Versions) Choices(n int64) []Choice {
	path := vs.Path(n)
	forks := map[int64][]int64{} // fork -> the versions that start there
	for _, v := range vs {
		if v.N == 0 {
			continue
		}
		if v.Fork == 0 || path.Has(v.Parent, v.Fork) {
			forks[v.Fork] = append(forks[v.Fork], v.N)
		}
	}
	var out []Choice
	for fork, starts := range forks {
		owner := int64(0)
		if fork != 0 {
			v, _ := vs.Find(starts[0])
			owner = v.Parent
		}
		slices.Sort(starts)
		lines := append([]int64{owner}, starts...)
		ch := Choice{Fork: fork, Versions: make([]int64, len(lines)), Current: -1}
		for i, line := range lines {
			if vs.inLine(n, line, owner, fork) {
				ch.Current, ch.Versions[i] = i, n
				continue
			}
			ch.Versions[i] = vs.lastShown(line, owner, fork)
		}
		if ch.Current >= 0 {
			out = append(out, ch)
		}
	}
	slices.SortFunc(out, func(a, b Choice) int { return int(a.Fork - b.Fork) })
	return out
}

// inLine reports whether version d goes on, after fork, as line does: line is either the
// owner of the fork event (going on in it past fork) or a version that starts at fork.
func (vs Versions) inLine(d, line, owner, fork int64) bool {
	for range len(vs) + 1 {
		if d == line {
			return true
		}
		v, _ := vs.Find(d)
		if d == 0 || v.Fork == 0 {
			return false
		}
		if line == owner && v.Parent == owner {
			return v.Fork > fork
		}
		d = v.Parent
	}
	return false
}

// lastShown is the version of line (see inLine) shown last: the one to show when it is chosen.
func (vs Versions) lastShown(line, owner, fork int64) int64 {
	best, at := line, time.Time{}
	for _, v := range vs {
		if vs.inLine(v.N, line, owner, fork) && (v.ChosenAt.After(at) || v.ChosenAt.Equal(at) && v.N > best) {
			best, at = v.N, v.ChosenAt
		}
	}
	return best
}
