package domain

import (
	"slices"
	"testing"
	"time"
)

// versionsLog is a conversation's log as versions see it: event id -> version.
type versionsLog map[int64]int64

func (l versionsLog) on(p Path) []int64 {
	var out []int64
	for id, v := range l {
		if p.Has(v, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func TestVersions(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	// Version 0: 1 person, 2 reply, 3 person, 4 reply.
	log := versionsLog{1: 0, 2: 0, 3: 0, 4: 0}
	vs := Versions{{N: 0, ChosenAt: at(1)}}

	// The last reply regenerated: version 1 shares 1-3 and has reply 5.
	vs = append(vs, Version{N: 1, Parent: 0, Fork: 3, Reason: VersionRegenerate, ChosenAt: at(2)})
	log[5] = 1
	if got, want := log.on(vs.Path(1)), []int64{1, 2, 3, 5}; !slices.Equal(got, want) {
		t.Fatalf("path of 1 = %v, want %v", got, want)
	}
	if got, want := log.on(vs.Path(0)), []int64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("path of 0 = %v, want %v (kept whole)", got, want)
	}
	want := []Choice{{Fork: 3, Versions: []int64{0, 1}, Current: 1}}
	if got := vs.Choices(1); !equalChoices(got, want) {
		t.Fatalf("choices of 1 = %+v, want %+v", got, want)
	}
	if got := vs.Choices(0); !equalChoices(got, []Choice{{Fork: 3, Versions: []int64{0, 1}, Current: 0}}) {
		t.Fatalf("choices of 0 = %+v", got)
	}

	// In version 1, the first message edited: version 2 shares nothing.
	vs = append(vs, Version{N: 2, Parent: 0, Fork: 0, Reason: VersionEdit, ChosenAt: at(3)})
	log[6], log[7] = 2, 2
	if got, want := log.on(vs.Path(2)), []int64{6, 7}; !slices.Equal(got, want) {
		t.Fatalf("path of 2 = %v, want %v", got, want)
	}
	// Going back to the first message's first version shows version 1: shown last of that line.
	if got, want := vs.Choices(2), []Choice{{Fork: 0, Versions: []int64{1, 2}, Current: 1}}; !equalChoices(got, want) {
		t.Fatalf("choices of 2 = %+v, want %+v", got, want)
	}
	// From version 1 both points show.
	vs[1].ChosenAt = at(4)
	want = []Choice{{Fork: 0, Versions: []int64{1, 2}, Current: 0}, {Fork: 3, Versions: []int64{0, 1}, Current: 1}}
	if got := vs.Choices(1); !equalChoices(got, want) {
		t.Fatalf("choices of 1 = %+v, want %+v", got, want)
	}

	// In version 2, its reply regenerated twice: versions 3 and 4 branch from 2 at 6.
	vs = append(vs, Version{N: 3, Parent: 2, Fork: 6, ChosenAt: at(5)}, Version{N: 4, Parent: 2, Fork: 6, ChosenAt: at(6)})
	log[8], log[9] = 3, 4
	if got, want := log.on(vs.Path(4)), []int64{6, 9}; !slices.Equal(got, want) {
		t.Fatalf("path of 4 = %v, want %v", got, want)
	}
	want = []Choice{{Fork: 0, Versions: []int64{1, 4}, Current: 1}, {Fork: 6, Versions: []int64{2, 3, 4}, Current: 2}}
	if got := vs.Choices(4); !equalChoices(got, want) {
		t.Fatalf("choices of 4 = %+v, want %+v", got, want)
	}
	// An event appended to version 0 after the forks is on no other version's path.
	log[10] = 0
	if vs.Path(1).Has(0, 10) || !vs.Path(0).Has(0, 10) {
		t.Fatal("event 10 of version 0 is on version 1's path, or not on version 0's")
	}
}

func equalChoices(a, b []Choice) bool {
	return slices.EqualFunc(a, b, func(x, y Choice) bool {
		return x.Fork == y.Fork && x.Current == y.Current && slices.Equal(x.Versions, y.Versions)
	})
}
