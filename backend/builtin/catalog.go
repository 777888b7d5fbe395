package builtin

// catalog holds the sentences the built-in agents say in the person's language: the
// platform engineer's document triage and the agents' opening and closing sentences. Each
// entry has English and, where there is one, German, French and Spanish, keyed by ISO 639-1
// code; anything else the agents say stays English. A translation keeps the English
// entry's format verbs, in the same order.
var catalog = map[string]map[string]string{
	// The platform engineer's triage of the documents of a message.
	"triage.heading": {
		"en": "### What I found in the documents",
		"de": "### Was ich in den Dokumenten gefunden habe",
		"fr": "### Ce que j'ai trouvé dans les documents",
		"es": "### Lo que encontré en los documentos",
	},
	// triage.colon ends a label: French sets a space before the colon.
	"triage.colon": {"en": ": ", "fr": " : "},
	"triage.log":   {"en": "log", "de": "Log", "fr": "journal", "es": "registro"},
	"triage.trace": {"en": "stack trace", "de": "Stacktrace", "fr": "trace d'appels", "es": "traza de pila"},
	"triage.table": {"en": "table", "de": "Tabelle", "fr": "tableau", "es": "tabla"},
	"triage.text":  {"en": "text", "de": "Text", "fr": "texte", "es": "texto"},
	"triage.lines": {"en": "%d lines", "de": "%d Zeilen", "fr": "%d lignes", "es": "%d líneas"},
	"triage.rows": {
		"en": "%d rows × %d columns", "de": "%d Zeilen × %d Spalten",
		"fr": "%d lignes × %d colonnes", "es": "%d filas × %d columnas",
	},
	"triage.partial": {
		"en": "only the first %s read", "de": "nur die ersten %s gelesen",
		"fr": "seuls les premiers %s lus", "es": "solo leí los primeros %s",
	},
	"triage.levels": {"en": "Levels", "de": "Level", "fr": "Niveaux", "es": "Niveles"},
	"triage.first_error": {
		"en": "First error, line %d", "de": "Erster Fehler, Zeile %d",
		"fr": "Première erreur, ligne %d", "es": "Primer error, línea %d",
	},
	"triage.first_warning": {
		"en": "First warning, line %d (no errors)", "de": "Erste Warnung, Zeile %d (keine Fehler)",
		"fr": "Premier avertissement, ligne %d (aucune erreur)", "es": "Primera advertencia, línea %d (sin errores)",
	},
	"triage.no_problems": {
		"en": "No error or warning lines.", "de": "Keine Fehler- oder Warnzeilen.",
		"fr": "Aucune ligne d'erreur ni d'avertissement.", "es": "Ninguna línea de error ni de advertencia.",
	},
	"triage.frequent": {
		"en": "Most frequent error, %d of %d (numbers and ids vary)", "de": "Häufigster Fehler, %d von %d (Zahlen und IDs variieren)",
		"fr": "Erreur la plus fréquente, %d sur %d (nombres et identifiants variables)", "es": "Error más frecuente, %d de %d (varían números e ids)",
	},
	"triage.first_trace": {
		"en": "First stack trace", "de": "Erster Stacktrace",
		"fr": "Première trace d'appels", "es": "Primera traza de pila",
	},
	"triage.error":      {"en": "Error", "de": "Fehler", "fr": "Erreur", "es": "Error"},
	"triage.root_cause": {"en": "Root cause", "de": "Ursache", "fr": "Cause première", "es": "Causa raíz"},
	"triage.frame": {
		"en": "Top frame in application code", "de": "Oberster Frame im Anwendungscode",
		"fr": "Premier cadre dans le code applicatif", "es": "Primer marco en código de la aplicación",
	},
	"triage.header":     {"en": "Header", "de": "Kopfzeile", "fr": "En-tête", "es": "Encabezado"},
	"triage.first_line": {"en": "First line", "de": "Erste Zeile", "fr": "Première ligne", "es": "Primera línea"},
	"triage.binary": {
		"en": "not text, so I can't read it", "de": "kein Text, daher kann ich es nicht lesen",
		"fr": "pas du texte, je ne peux donc pas le lire", "es": "no es texto, así que no puedo leerlo",
	},
	"triage.unreadable": {
		"en": "I could not read it", "de": "ich konnte es nicht lesen",
		"fr": "je n'ai pas pu le lire", "es": "no pude leerlo",
	},
	"triage.next": {
		"en": "That is what I can tell from reading them; I run offline and cannot dig further. If it helps, I can prepare a Jira issue about it, a pull request or a configuration change: just say which.",
		"de": "Mehr kann ich beim Lesen nicht erkennen; ich arbeite offline und kann nicht weiter nachforschen. Wenn es hilft, bereite ich ein Jira-Ticket, einen Pull Request oder eine Konfigurationsänderung vor: sag einfach, was davon.",
		"fr": "Voilà ce que je peux en dire à la lecture ; je fonctionne hors ligne et ne peux pas creuser davantage. Si cela aide, je peux préparer un ticket Jira, une pull request ou un changement de configuration : dites-moi lequel.",
		"es": "Esto es lo que puedo deducir al leerlos; funciono sin conexión y no puedo investigar más. Si sirve, puedo preparar una incidencia de Jira, una pull request o un cambio de configuración: dime cuál.",
	},

	// The platform engineer's opening and closing sentences.
	"engineer.intro": {
		"en": "I'm Parley's built-in platform engineer. I can prepare three kinds of change, asking you for the details in a form:",
		"de": "Ich bin Parleys eingebauter Platform Engineer. Ich kann drei Arten von Änderungen vorbereiten und frage die Details in einem Formular ab:",
		"fr": "Je suis l'ingénieur plateforme intégré de Parley. Je peux préparer trois types de changement, en vous demandant les détails dans un formulaire :",
		"es": "Soy el ingeniero de plataforma integrado de Parley. Puedo preparar tres tipos de cambio y pedirte los detalles en un formulario:",
	},
	"engineer.outro": {
		"en": "I run offline and perform no external action: once you've filled in the form I tell you exactly what I would do.",
		"de": "Ich arbeite offline und führe keine externe Aktion aus: Sobald das Formular ausgefüllt ist, sage ich genau, was ich tun würde.",
		"fr": "Je fonctionne hors ligne et n'effectue aucune action externe : une fois le formulaire rempli, je vous dis exactement ce que je ferais.",
		"es": "Funciono sin conexión y no realizo ninguna acción externa: cuando completes el formulario, te digo exactamente lo que haría.",
	},
	"engineer.offline": {
		"en": "_I'm Parley's built-in platform engineer: I run offline and performed no external action. Nothing was created or changed; run the steps above yourself, or ask an agent connected to your tools._",
		"de": "_Ich bin Parleys eingebauter Platform Engineer: Ich arbeite offline und habe keine externe Aktion ausgeführt. Nichts wurde erstellt oder geändert; führe die Schritte oben selbst aus oder frage einen Agenten, der mit deinen Werkzeugen verbunden ist._",
		"fr": "_Je suis l'ingénieur plateforme intégré de Parley : je fonctionne hors ligne et n'ai effectué aucune action externe. Rien n'a été créé ni modifié ; exécutez vous-même les étapes ci-dessus, ou demandez à un agent connecté à vos outils._",
		"es": "_Soy el ingeniero de plataforma integrado de Parley: funciono sin conexión y no realicé ninguna acción externa. No se creó ni cambió nada; ejecuta tú los pasos anteriores o pídeselo a un agente conectado a tus herramientas._",
	},

	// The event planner's opening and closing sentences.
	"planner.greeting": {
		"en": "Thanks! I'll plan this with four specialists (venue, budget, catering and logistics) and then put everything together in one plan.",
		"de": "Danke! Ich plane das mit vier Spezialisten (Location, Budget, Catering und Logistik) und fasse danach alles in einem Plan zusammen.",
		"fr": "Merci ! Je vais organiser cela avec quatre spécialistes (lieu, budget, traiteur et logistique), puis tout réunir dans un seul plan.",
		"es": "¡Gracias! Lo planificaré con cuatro especialistas (lugar, presupuesto, catering y logística) y luego lo reuniré todo en un solo plan.",
	},
	"planner.so_far": {
		"en": "Here is what I have so far:", "de": "Das weiß ich bisher:",
		"fr": "Voici ce que je sais pour l'instant :", "es": "Esto es lo que tengo hasta ahora:",
	},
	"planner.footer": {
		"en": "_Made by Parley's built-in event planner, which is deterministic and runs offline: the venues are illustrative, and nothing was booked, ordered or paid for._",
		"de": "_Erstellt von Parleys eingebautem Eventplaner, der deterministisch und offline arbeitet: Die Locations sind nur Beispiele, und nichts wurde gebucht, bestellt oder bezahlt._",
		"fr": "_Réalisé par le planificateur d'événements intégré de Parley, déterministe et hors ligne : les lieux sont donnés à titre d'exemple, et rien n'a été réservé, commandé ni payé._",
		"es": "_Hecho por el planificador de eventos integrado de Parley, que es determinista y funciona sin conexión: los lugares son ilustrativos y no se reservó, pidió ni pagó nada._",
	},
}

// phrase is the catalog's sentence key in lang, English when it has no translation.
func phrase(lang, key string) string {
	m := catalog[key]
	if s, ok := m[lang]; ok {
		return s
	}
	return m["en"]
}
