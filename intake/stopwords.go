package intake

import (
	"strings"
	"sync"
	"unicode"
)

// stopWords are frequent function words of the languages people most often write to us
// in. Trigram profiles need more text than a one-line question gives them (whatlanggo takes
// "Warum bekommen wir alle paar Minuten den Fehler?" for Norwegian); counting these words
// settles such questions.
var stopWords = map[string]string{
	"en": "the and is are were be to of in it this that with for on not what why how when which do does did can could would should you we my our have has from there here an or but if so any me",
	"de": "der die das und ist nicht hier obwohl ein eine einen ich wir sie du ihr mit für auf den dem des von zu warum wie was wo wann bitte kann kannst können haben hat habe sich auch noch aber oder wenn dass beim seit ab mir uns euch alle wird werden sind bei nach aus im schon",
	"fr": "le la les un une des du et est pas ne je tu il nous vous ils que qui quoi pourquoi comment dans pour sur avec ce cette ces mon mes votre vos au aux sont été être avoir peux pouvez merci mais ou où depuis très plus",
	"es": "el la los las un una y es está son no que qué por porque para con en del al lo se mi mis su sus pero como cómo cuando dónde puedes puede hay esto este esta muy también gracias",
	"it": "il lo la gli le un una e è non che di da per con su del della nel nella sono questo questa perché come quando dove puoi può mi ci ma anche grazie ho hai ha",
	"pt": "o os a as um uma e é não que do da dos das em no na nos para por com se mas como quando onde porque você vocês está são foi isso este esta muito também obrigado pode posso",
	"nl": "de het een en is niet van op te dat die voor met zijn ik je we wij jij u waarom hoe wat waar wanneer kun kunt kan maar ook nog er bij naar uit deze dit",
	"pl": "i w z na nie się to jest że do od o jak dlaczego czy co gdzie kiedy ale tak jestem mam możesz proszę dla po przy przez ten ta te",
	"ru": "и в не на что как почему это я мы вы ты он она с по для при у из за от ли же бы или но да нет можешь можно пожалуйста есть был была было",
	"uk": "і в не на що як чому це я ми ви ти він вона з по для при у із за від чи або але так ні можеш можна будь ласка є був була було",
}

// stopWordIndex maps each stop word to its languages.
var stopWordIndex = sync.OnceValue(func() map[string][]string {
	index := map[string][]string{}
	for lang, words := range stopWords {
		for _, w := range strings.Fields(words) {
			index[w] = append(index[w], lang)
		}
	}
	return index
})

// voteLanguage counts the stop words of each language in sample and returns the language
// with the most, when it has at least two and more than any other; "" otherwise.
func voteLanguage(sample string) string {
	index := stopWordIndex()
	votes := map[string]int{}
	words := strings.FieldsFunc(strings.ToLower(sample), func(r rune) bool { return !unicode.IsLetter(r) })
	for _, w := range words {
		for _, lang := range index[w] {
			votes[lang]++
		}
	}
	best, first, second := "", 0, 0
	for lang, n := range votes {
		switch {
		case n > first || n == first && lang < best:
			if n > first {
				second = first
			}
			best, first = lang, n
		case n > second:
			second = n
		}
	}
	if first < 2 || first == second {
		return ""
	}
	return best
}
