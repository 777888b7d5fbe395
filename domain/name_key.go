package domain

import (
	"go.mau.fi/util/confusable"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// NameKey is what two account names that look alike have in common: their UTS #39
// skeleton (Cyrillic "о" and Latin "o", "rn" and "m", "I" and "l" map to one prototype),
// taken after NFKC (full-width and other compatibility forms) and again after case folding,
// so that "rооt" (Cyrillic), "ROOT" and "root" have one key. Accounts are unique by it.
func NameKey(name string) string {
	s := confusable.Skeleton(norm.NFKC.String(name))
	return confusable.Skeleton(cases.Fold().String(s))
}
