package builtin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/backend/backendtest"
	"github.com/parley-chat/parley/domain"
)

// checkoutLog is a 2,000-line service log with warnings, two kinds of error and a config
// reload (a word the engineer would otherwise take for a request). It returns the log, its
// first ERROR line and its count of each level.
func checkoutLog() (string, string, map[string]int) {
	start := time.Date(2025, 3, 14, 8, 0, 0, 0, time.UTC)
	counts := map[string]int{}
	first := ""
	var b strings.Builder
	for i := range 2000 {
		at := start.Add(time.Duration(i) * 1500 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		level, msg := "INFO", fmt.Sprintf("GET /api/cart/%d 200 %dms", 1000+i, 12+i%40)
		switch {
		case i == 700:
			level, msg = "INFO", "config reloaded from /etc/checkout/config.yaml"
		case i%97 == 13:
			level, msg = "ERROR", fmt.Sprintf("payment provider timeout after %dms order=ord-%d trace=%x", 30000+i%3*500, 50000+i, 0xa1b2c3d40000+i)
		case i%331 == 200:
			level, msg = "ERROR", fmt.Sprintf("could not reserve stock for sku %d: deadlock detected", 4000+i)
		case i%23 == 5:
			level, msg = "WARN", fmt.Sprintf("slow query on carts took %dms", 800+i%200)
		}
		line := fmt.Sprintf("%s %-5s [checkout] %s", at, level, msg)
		if level == "ERROR" && first == "" {
			first = line
		}
		counts[level]++
		b.WriteString(line + "\n")
	}
	return b.String(), first, counts
}

func TestPlatformEngineer_ReadsALog(t *testing.T) {
	log, firstError, counts := checkoutLog()
	question := "Why does checkout keep failing since this morning?"
	c := backendtest.NewConvo(t, NewPlatformEngineer(Options{}))
	rec, refs, err := c.SendWithDocuments(question+"\n\n"+log, question,
		domain.Document{DocumentRef: domain.DocumentRef{Name: "checkout.log", MimeType: "text/x-log"}, Content: []byte(log)})
	if err != nil {
		t.Fatal(err)
	}
	msgs := rec.Messages()
	if len(msgs) != 2 {
		t.Fatalf("got %d messages %q, want the triage and what next", len(msgs), msgs)
	}
	triage := msgs[0]
	for _, want := range []string{
		"### What I found in the documents",
		"**checkout.log** · log · 2000 lines · " + refs[0].SizeLabel(),
		fmt.Sprintf("- Levels: %d ERROR · %d WARN · %d INFO", counts["ERROR"], counts["WARN"], counts["INFO"]),
		"`2025-03-14T08:00:00.000Z` → `2025-03-14T08:49:58.500Z` (49m59s)",
		"- First error, line 14: `" + firstError + "`",
		"- Most frequent error, 21 of 27 (numbers and ids vary): `[checkout] payment provider timeout after 30500ms order=ord-50013 trace=a1b2c3d4000d`",
	} {
		if !strings.Contains(triage, want) {
			t.Errorf("triage lacks %q:\n%s", want, triage)
		}
	}
	if !strings.Contains(msgs[1], "I run offline and cannot dig further") {
		t.Errorf("got %q, want what the engineer can do next", msgs[1])
	}
	// The person's question is read, not the pasted log: "config" in it asks for nothing.
	if len(rec.Questions()) != 0 {
		t.Errorf("got questions %+v, want none", rec.Questions())
	}
	if cp := rec.LastCheckpoint(); cp["done"] != true {
		t.Errorf("got checkpoint %v, want the run done", cp)
	}
}

func TestPlatformEngineer_ReadsThenAsks(t *testing.T) {
	c := backendtest.NewConvo(t, NewPlatformEngineer(Options{}))
	trace := domain.Document{DocumentRef: domain.DocumentRef{Name: "panic.txt", MimeType: "text/plain"}, Content: []byte(goPanic)}
	rec, _, err := c.SendWithDocuments("Open a Jira issue for this crash, high priority\n\n"+goPanic, "Open a Jira issue for this crash, high priority", trace)
	if err != nil {
		t.Fatal(err)
	}
	msgs := rec.Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "- Error: `panic: runtime error: invalid memory address or nil pointer dereference`") ||
		!strings.Contains(msgs[0], "- Top frame in application code: `github.com/acme/shop/internal/orders.(*Service).Charge(") {
		t.Errorf("got messages %q, want the trace's triage", msgs)
	}
	q := backendtest.OnlyQuestion(t, rec)
	if q.Fields[0].Name != "issue_title" || q.Fields[2].Default != "High" {
		t.Errorf("got question %+v, want the Jira form as without documents", q)
	}
}

func TestPlatformEngineer_TriageInGerman(t *testing.T) {
	c := backendtest.NewConvo(t, NewPlatformEngineer(Options{}))
	c.Language = "de"
	log, _, _ := checkoutLog()
	rec, _, err := c.SendWithDocuments("Warum schlägt der Checkout fehl?\n"+log, "Warum schlägt der Checkout fehl?",
		domain.Document{DocumentRef: domain.DocumentRef{Name: "checkout.log", MimeType: "text/x-log"}, Content: []byte(log)})
	if err != nil {
		t.Fatal(err)
	}
	msgs := rec.Messages()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "### Was ich in den Dokumenten gefunden habe\n") ||
		!strings.Contains(msgs[0], "· Log · 2000 Zeilen ·") || !strings.Contains(msgs[0], "- Erster Fehler, Zeile 14: `") {
		t.Fatalf("got messages %q, want the German triage", msgs)
	}
	if !strings.Contains(msgs[1], "ich arbeite offline") {
		t.Errorf("got %q, want the German closing", msgs[1])
	}
}

func TestPlatformEngineer_CapabilitiesInFrench(t *testing.T) {
	c := backendtest.NewConvo(t, NewPlatformEngineer(Options{}))
	c.Language = "fr"
	msgs := c.MustSend("bonjour").Messages()
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "Je suis l'ingénieur plateforme intégré de Parley.") ||
		!strings.Contains(msgs[0], "- **GitHub pull request**") {
		t.Errorf("got %q, want the French opening with the English examples", msgs)
	}
}

func TestPlatformEngineer_WithoutDocumentsAsBefore(t *testing.T) {
	c := backendtest.NewConvo(t, NewPlatformEngineer(Options{}))
	msgs := c.MustSend("hello, what can you do?").Messages()
	if len(msgs) != 1 || msgs[0] != capabilities("en") {
		t.Errorf("got %q, want the capabilities alone", msgs)
	}
}

func TestEventPlanner_ReadsTheIntent(t *testing.T) {
	guests := "name,email,diet\nAda,ada@example.com,vegan\nLin,lin@example.com,\n"
	intent := "Plan a team dinner for 12 people in Portland"
	c := backendtest.NewConvo(t, NewEventPlanner(Options{}))
	c.Language = "es"
	rec, _, err := c.SendWithDocuments(intent+", here is the list of 250 invitees:\n"+guests, intent,
		domain.Document{DocumentRef: domain.DocumentRef{Name: "guests.csv", MimeType: "text/csv"}, Content: []byte(guests)})
	if err != nil {
		t.Fatal(err)
	}
	greeting := rec.Messages()[0]
	for _, want := range []string{"¡Gracias! Lo planificaré con cuatro especialistas", "Esto es lo que tengo hasta ahora:",
		"- **Guests:** 12\n", "- **Where:** Portland\n"} {
		if !strings.Contains(greeting, want) {
			t.Errorf("greeting lacks %q:\n%s", want, greeting)
		}
	}
	if strings.Contains(greeting, "AVAILABLE_DOCUMENTS") || strings.Contains(greeting, "250") {
		t.Errorf("the planner read more than the intent:\n%s", greeting)
	}
}
