package intake

import (
	"os"
	"testing"
)

func TestDetectLanguage(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"English", "Why does the nightly billing job crash since the upgrade?", "en"},
		{"German", "Warum bekommen wir alle paar Minuten den Fehler?", "de"},
		{"GermanWithInlineCode", "Warum liefert `store.Conversation` hier nil zurück, obwohl die ID stimmt?", "de"},
		{"GermanWithURLAndFile", "Kannst du dir https://example.com/issues/41 und config.yaml ansehen? Der Dienst startet nicht.", "de"},
		{"French", "Pourquoi le service plante-t-il au démarrage ?", "fr"},
		{"Spanish", "¿Por qué falla el servicio al arrancar?", "es"},
		{"Italian", "Perché il servizio si blocca all'avvio?", "it"},
		{"Dutch", "Waarom crasht de service bij het opstarten?", "nl"},
		{"Polish", "Dlaczego usługa ulega awarii podczas uruchamiania?", "pl"},
		{"Chinese", "为什么服务在启动时崩溃？", "zh"},
		{"Japanese", "なぜ起動時にサービスがクラッシュするのですか？", "ja"},
		{"JapaneseMostlyKanji", "本番環境で起動時に障害発生、原因調査をお願いします。", "ja"},
		{"TooShort", "Any idea?", ""},
		{"TooShortGerman", "Woran liegt das?", ""},
		{"Empty", "", ""},
		{"OnlyCode", "`x := m[\"a\"]` https://example.com/a/b?c=d 0x1f2e3d", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectLanguage(tt.text); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDetectLanguage_Samples(t *testing.T) {
	for file, want := range map[string]string{
		"english.txt": "en", "german.txt": "de", "french.txt": "fr", "russian.txt": "ru", "chinese.txt": "zh",
	} {
		b, err := os.ReadFile("testdata/tokens/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if got := DetectLanguage(string(b)); got != want {
			t.Errorf("%s: got %q, want %q", file, got, want)
		}
	}
}

// A German question with an English stack trace is German: the language is detected on the
// prose only, whichever way the message is analyzed.
func TestLanguage_MixedMessage(t *testing.T) {
	text := "Hallo, seit dem Update bricht der Import jede Nacht ab. Was ist hier kaputt?\n\n" + javaTrace + "\n" + appLog(30)
	if got := Split(text).Language; got != "de" {
		t.Errorf("Split: got %q, want de", got)
	}
	if got := DetectLanguage(proseOf(text)); got != "de" {
		t.Errorf("proseOf: got %q, want de", got)
	}
}

func BenchmarkDetectLanguage(b *testing.B) {
	text := "Hallo zusammen, seit dem letzten Update stürzt unser Dienst beim Start regelmäßig ab. Könnt ihr euch bitte das Protokoll ansehen?"
	for b.Loop() {
		DetectLanguage(text)
	}
}

// Short questions are hard: the detector may give up on them, but must not get them wrong.
func TestDetectLanguage_ShortQuestions(t *testing.T) {
	sets := map[string][]string{
		"en": {
			"What is nil here, and how do I fix it?", "Why does this crash on startup?", "Can you explain this error to me?",
			"The build fails since yesterday.", "How do I fix this panic?", "Is the config wrong?", "Why is the rollout stuck?",
			"Summarize the meeting notes below.", "Refund the failed orders please.", "What changed between these two versions?",
			"Draft a reply to the customer.", "Which step failed and why?", "Is POST /messages a regression?", "Why are the responses so slow?",
			"Here is the log from this morning", "Make the tests pass", "Check whether the migration is safe", "Which endpoint is slowest?",
		},
		"de": {
			"Warum stürzt der Dienst beim Start ab?", "Kannst du mir den Fehler erklären?", "Der Build schlägt seit gestern fehl.",
			"Wie behebe ich diese Panik?", "Ist die Konfiguration falsch?", "Was hat sich zwischen den Versionen geändert?",
			"Bitte schreib eine Antwort an den Kunden.", "Welcher Schritt ist fehlgeschlagen und warum?", "Hier ist das Protokoll von heute Morgen",
			"Mach bitte, dass die Tests laufen", "Warum sind die Antworten so langsam?", "Warum bekommen wir alle paar Minuten den Fehler 'ledger closed'?",
		},
		"fr": {"Pourquoi le service plante-t-il au démarrage ?", "Peux-tu m'expliquer cette erreur ?", "La compilation échoue depuis hier.", "Quelle étape a échoué et pourquoi ?"},
		"es": {"¿Por qué falla el servicio al arrancar?", "¿Puedes explicarme este error?", "La compilación falla desde ayer."},
		"ru": {"Почему сервис падает при запуске?", "Можешь объяснить эту ошибку?"},
		"uk": {"Чому сервіс падає під час запуску?", "Можеш пояснити цю помилку?"},
		"nl": {"Waarom crasht de service bij het opstarten?", "Kun je deze fout uitleggen?"},
		"pt": {"Por que o serviço falha ao iniciar?", "Você pode explicar este erro?"},
		"it": {"Perché il servizio si blocca all'avvio?", "Puoi spiegarmi questo errore?"},
		"sv": {"Varför kraschar tjänsten när den startar?", "Kan du förklara det här felet för mig?"},
	}
	known, total := 0, 0
	for want, texts := range sets {
		for _, text := range texts {
			total++
			switch got := DetectLanguage(text); got {
			case want:
				known++
			case "":
			default:
				t.Errorf("%q: got %q, want %q or nothing", text, got, want)
			}
		}
	}
	if known*10 < total*8 {
		t.Errorf("detected %d of %d, want at least 80%%", known, total)
	}
}
