package a2a

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/a2aproject/a2a-go/a2a"

	"github.com/parley-chat/parley/domain"
)

// DefaultMaxDocumentBytes bounds the documents sent with one message, all together, before
// base64. A document that would go past it is listed in the message's text but not sent,
// and the listing says so: remote agents commonly keep whole messages in memory and in
// their task history, and echo them back in Task events.
const DefaultMaxDocumentBytes = 8 << 20

// languageKey is the message metadata that names the person's language (ISO 639-1).
const languageKey = "language"

// userMessage is a person's message as the remote agent is told it.
type userMessage struct {
	// text is the intent intake made of the message, or the message as written.
	text string
	docs []domain.DocumentRef
}

// newUserMessage reads a user_message event the way agents are meant to (see Event.Prompt).
func newUserMessage(ev domain.Event) userMessage {
	text := ev.Text
	if ev.Intent != "" {
		text = ev.Intent
	}
	return userMessage{text: text, docs: ev.Documents}
}

// empty reports whether there is nothing to send.
func (m userMessage) empty() bool { return m.text == "" && len(m.docs) == 0 }

// messageParts is the person's messages as one A2A message: a TextPart with their texts,
// the language they write in and the AVAILABLE_DOCUMENTS listing, then a FilePart with the
// bytes of each document, in the listing's order, up to the configured total.
func (s *session) messageParts(ctx context.Context, msgs []userMessage) ([]sdk.Part, error) {
	var texts []string
	var refs []domain.DocumentRef
	seen := map[int64]bool{}
	for _, m := range msgs {
		if m.text != "" {
			texts = append(texts, m.text)
		}
		for _, d := range m.docs {
			if !seen[d.ID] {
				seen[d.ID] = true
				refs = append(refs, d)
			}
		}
	}
	if note := languageNote(s.in.Language); note != "" {
		texts = append(texts, note)
	}
	if len(refs) == 0 {
		return []sdk.Part{sdk.TextPart{Text: strings.Join(texts, "\n\n")}}, nil
	}
	var files []sdk.Part
	var listing strings.Builder
	listing.WriteString("AVAILABLE_DOCUMENTS:")
	budget := s.a.cfg.MaxDocumentBytes
	for _, ref := range refs {
		listing.WriteString("\n" + strings.TrimPrefix(domain.AvailableDocuments([]domain.DocumentRef{ref}), "AVAILABLE_DOCUMENTS:\n"))
		note, err := s.attach(ctx, ref, &budget, &files)
		if err != nil {
			return nil, err
		}
		listing.WriteString(note)
	}
	if len(files) > 0 {
		listing.WriteString("\nThe documents not marked [not attached] come with this message as file parts, in this order.")
	}
	texts = append(texts, listing.String())
	return append([]sdk.Part{sdk.TextPart{Text: strings.Join(texts, "\n\n")}}, files...), nil
}

// attach adds the document to files as a FilePart when it fits in what is left of budget,
// spending it, and returns what the text says of it: "" when attached, " [not attached:
// why]" otherwise.
func (s *session) attach(ctx context.Context, ref domain.DocumentRef, budget *int, files *[]sdk.Part) (string, error) {
	part, n, why, err := s.filePart(ctx, ref, *budget)
	if err != nil || why != "" {
		return " [not attached: " + why + "]", err
	}
	*budget -= n
	*files = append(*files, part)
	return "", nil
}

// filePart reads a document into a FilePart when it fits in budget bytes, and says how many
// bytes it takes; otherwise why says, for the listing, why it is not attached.
func (s *session) filePart(ctx context.Context, ref domain.DocumentRef, budget int) (part sdk.FilePart, n int, why string, err error) {
	tooLarge := fmt.Sprintf("over the %s Parley sends with one message", size(s.a.cfg.MaxDocumentBytes))
	const unreadable = "Parley could not read it"
	if ref.Size > int64(budget) {
		return part, 0, tooLarge, nil
	}
	if s.in.Documents == nil {
		return part, 0, unreadable, nil
	}
	doc, err := s.in.Documents.Document(ctx, ref.ID)
	switch {
	case err != nil && ctx.Err() != nil:
		return part, 0, "", ctx.Err()
	case err != nil:
		return part, 0, unreadable, nil
	case len(doc.Content) > budget:
		return part, 0, tooLarge, nil
	}
	mimeType := ref.MimeType
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	part = sdk.FilePart{File: sdk.FileBytes{
		FileMeta: sdk.FileMeta{Name: ref.Name, MimeType: mimeType},
		Bytes:    base64.StdEncoding.EncodeToString(doc.Content),
	}}
	return part, len(doc.Content), "", nil
}

// languageNote tells the agent, in a few words, which language the person writes in. None
// is needed for English, what remote agents assume.
func languageNote(code string) string {
	if code == "" || code == "en" {
		return ""
	}
	name, ok := languageNames[code]
	if !ok {
		name = fmt.Sprintf("the language with ISO 639-1 code %q", code)
	}
	return "(The person writes in " + name + ".)"
}

// languageNames are the languages intake is likely to detect, by ISO 639-1 code.
var languageNames = map[string]string{
	"ar": "Arabic", "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish",
	"de": "German", "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian",
	"fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi",
	"hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian", "ja": "Japanese",
	"ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "nb": "Norwegian", "nl": "Dutch",
	"no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
	"sk": "Slovak", "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "th": "Thai",
	"tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}
