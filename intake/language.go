package intake

import (
	"strings"
	"sync"
	"unicode"

	"github.com/abadojack/whatlanggo"
)

// Language detection needs enough letters to be meaningful and no more than a few
// kilobytes to be sure: trigram profiles settle quickly, and a long sample only costs time.
const (
	minLetters     = 20
	maxSampleBytes = 4096
	// minConfidence is whatlanggo's margin over the second-best language below which a guess
	// is unreliable. Short questions often score low even when right, but most of the wrong
	// guesses we measured (German as French, Russian as Ukrainian) scored lower still.
	minConfidence = 0.3
)

// rareLanguages are left out of detection: whatlanggo picks them for short English and
// German questions (Javanese, Malagasy, Haitian Creole, ...), and people rarely write to a
// developer tool in them.
var rareLanguages = sync.OnceValue(func() map[whatlanggo.Lang]bool {
	m := map[whatlanggo.Lang]bool{}
	for _, code := range []string{"jav", "mlg", "hat", "ilo", "ceb", "aka", "zul", "kin", "run", "sna", "nya", "som", "orm", "ibo", "yor", "hau", "epo"} {
		m[whatlanggo.CodeToLang(code)] = true
	}
	return m
})

// DetectLanguage returns the ISO 639-1 code ("en", "de", ...) of the language prose is
// written in, or "" when the text is too short (under 20 letters; a CJK character counts as
// three) or the guess is unreliable. Give it prose only: code, logs and URLs are English-like
// noise that outvotes a short question in another language. Only the first 4 KB are read.
//
// Counting the stop words of ten common languages (see stopWords) decides when it is
// clear-cut, which it is for most questions; whatlanggo's trigram profiles decide otherwise,
// when they are confident enough.
func DetectLanguage(prose string) string {
	sample, letters, kana := languageSample(prose)
	if letters < minLetters {
		return ""
	}
	info := whatlanggo.DetectWithOptions(sample, whatlanggo.Options{Blacklist: rareLanguages()})
	code := ""
	if info.Lang >= 0 {
		code = info.Lang.Iso6391()
	}
	switch {
	case code == "zh" && kana > 0:
		// whatlanggo calls Japanese with more kanji than kana Mandarin.
		return "ja"
	case info.Script == unicode.Latin || info.Script == unicode.Cyrillic:
		if vote := voteLanguage(sample); vote != "" {
			return vote
		}
	}
	if info.Confidence < minConfidence {
		return ""
	}
	return code
}

// languageSample cuts prose to at most maxSampleBytes of words, dropping URLs, paths,
// inline code and words with digits or underscores, which say nothing about the language.
// It counts the letters kept, CJK characters three times, and the kana among them.
func languageSample(prose string) (sample string, letters, kana int) {
	if len(prose) > 4*maxSampleBytes {
		prose = prose[:4*maxSampleBytes]
	}
	var b strings.Builder
	inCode := false
	for _, w := range strings.Fields(prose) {
		if b.Len() >= maxSampleBytes {
			break
		}
		// Backticks toggle inline code; a word inside it is skipped.
		ticks := strings.Count(w, "`")
		skip := inCode || ticks > 0
		if ticks%2 == 1 {
			inCode = !inCode
		}
		if skip || !isLanguageWord(w) {
			continue
		}
		for _, r := range w {
			switch {
			case unicode.In(r, unicode.Han, unicode.Hangul):
				letters += 3
			case unicode.In(r, unicode.Hiragana, unicode.Katakana):
				letters += 3
				kana++
			case unicode.IsLetter(r):
				letters++
			}
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String(), letters, kana
}

// isLanguageWord reports whether a whitespace-separated word is natural language rather
// than an identifier, a URL, a path or a number.
func isLanguageWord(w string) bool {
	if strings.Contains(w, "://") || strings.HasPrefix(w, "www.") {
		return false
	}
	letters := 0
	for i, r := range w {
		if r == '.' && i+1 < len(w) && isAlnumByte(w[i+1]) {
			return false // a file name, a qualified identifier or an abbreviation
		}
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '_', r == '/', r == '\\', r == '=', r == '<', r == '>', r == '{', r == '}',
			r == '$', r == '@', r == '#', r == '|', r == '*', r == '+', unicode.IsDigit(r):
			return false
		}
	}
	return letters > 0
}

func isAlnumByte(c byte) bool { return isLetterByte(c) || isDigitByte(c) }
