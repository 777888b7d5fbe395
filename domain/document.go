package domain

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The labels of documents, by how they came to be.
const (
	// LabelUserContext marks the blocks intake split off the first message of a round.
	LabelUserContext = "user_context"
	// LabelUpload marks a file the person attached to a message.
	LabelUpload = "upload"
	// LabelAnswer marks a file the person uploaded to answer a question's file field.
	LabelAnswer = "answer"
)

// DocumentRef describes a stored document: what the page shows as a chip and what an agent
// sees in its AVAILABLE_DOCUMENTS listing.
type DocumentRef struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Title    string `json:"title,omitempty"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	Label    string `json:"label"`
}

// Document is a stored document with its content.
type Document struct {
	DocumentRef
	Content []byte
}

// Documents reads the documents of the conversation a step runs in. A document of another
// conversation is not found.
type Documents interface {
	Document(ctx context.Context, id int64) (Document, error)
}

// IsText reports whether the document is text that can be shown and read as such.
func (d DocumentRef) IsText() bool {
	mt, _, _ := mime.ParseMediaType(d.MimeType)
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case textApplicationTypes[mt], strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

// textApplicationTypes are the application/ types that hold text: data formats, and the
// source code types that intake, uploads and models give code blocks and files.
var textApplicationTypes = map[string]bool{
	"application/json": true, "application/yaml": true, "application/x-yaml": true,
	"application/xml": true, "application/toml": true, "application/x-ndjson": true,
	"application/sql": true, "application/javascript": true, "application/ecmascript": true,
	"application/typescript": true, "application/x-sh": true, "application/x-shellscript": true,
	"application/x-python": true, "application/x-ruby": true, "application/x-perl": true,
	"application/x-httpd-php": true, "application/graphql": true, "application/csv": true,
	"application/x-diff": true, "application/x-patch": true, "application/x-tex": true,
	"application/ld+json": true, "application/x-www-form-urlencoded": true,
}

// Readable reports whether the document can be read as text: its type says text, or its
// content is UTF-8 without NUL bytes (a code block or file whose type names no text, such
// as application/x-unknown-script). A rune cut at the end of the sampled head of a long
// document is allowed.
func (d Document) Readable() bool {
	if d.IsText() {
		return true
	}
	head := d.Content[:min(len(d.Content), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for i := 0; i < utf8.UTFMax && len(head) < len(d.Content) && !utf8.Valid(head) && len(head) > 0; i++ {
		head = head[:len(head)-1]
	}
	return utf8.Valid(head)
}

// SizeLabel is the document's size as people read it.
func (d DocumentRef) SizeLabel() string { return ByteSize(d.Size) }

// ByteSize formats a number of bytes as people read it: 812 B, 14.2 KB, 3.1 MB.
func ByteSize(n int64) string {
	switch {
	case n < 10000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// Analysis is what intake made of the first message of a round: the person's request in
// short, the language it is written in, and the bulky blocks to keep as documents. Its JSON
// is the analyzer format of seeds/002.
type Analysis struct {
	Language string        `json:"detectedLanguage"`
	Intent   string        `json:"intent"`
	Items    []ContextItem `json:"contextItems"`

	// Via says how the analysis was made: "whole" (small enough to pass untouched),
	// "builtin", "model", or "fallback" (the model's analysis was unusable).
	Via string `json:"-"`
	// Tokens is the message's size in tokens, Threshold the size above which it is split.
	Tokens, Threshold int `json:"-"`
}

// ContextItem is one block split off a message, to be stored as a user_context document.
type ContextItem struct {
	Title    string `json:"title"`
	MimeType string `json:"mimeType"`
	Content  string `json:"content"`
}

// Analyzer splits the first message of a round into an intent and context items. A message
// below its threshold comes back whole, with no items. Analyzers never lose text: what is
// not in the intent is in an item.
type Analyzer interface {
	Analyze(ctx context.Context, text string) (Analysis, error)
}

// Intake is the stored result of analyzing a person's message (the event's payload).
type Intake struct {
	// MessageEventID is the user_message event analyzed.
	MessageEventID int64 `json:"message_event_id"`
	// Intent is the cleaned prompt agents are given; the raw one stays on the message.
	Intent    string        `json:"intent"`
	Language  string        `json:"language,omitempty"`
	Documents []DocumentRef `json:"documents,omitempty"`
	Via       string        `json:"via,omitempty"`
	Tokens    int           `json:"tokens,omitempty"`
	Threshold int           `json:"threshold,omitempty"`
}

// Prompt is a person's message as an agent should read it: the cleaned intent when intake
// made one (the raw text otherwise), followed by the AVAILABLE_DOCUMENTS listing when
// documents are attached.
func (ev Event) Prompt() string {
	text := ev.Text
	if ev.Intent != "" {
		text = ev.Intent
	}
	if len(ev.Documents) == 0 {
		return text
	}
	return text + "\n\n" + AvailableDocuments(ev.Documents)
}

// AvailableDocuments lists documents for an agent, one line each.
func AvailableDocuments(docs []DocumentRef) string {
	var b strings.Builder
	b.WriteString("AVAILABLE_DOCUMENTS:")
	for _, d := range docs {
		fmt.Fprintf(&b, "\n- id %d: %s (%s, %s)", d.ID, d.Name, d.MimeType, d.SizeLabel())
		if d.Title != "" && d.Title != d.Name {
			fmt.Fprintf(&b, " %q", d.Title)
		}
	}
	return b.String()
}

// FoldIntake gives each person's message in history the intent and documents of its intake
// event, so that agents read messages through Prompt alone.
func FoldIntake(history []Event) {
	at := map[int64]int{}
	for i, ev := range history {
		switch ev.Kind {
		case EventUserMessage:
			at[ev.ID] = i
		case EventIntake:
			if ev.Intake == nil {
				continue
			}
			if i, ok := at[ev.Intake.MessageEventID]; ok {
				m := &history[i]
				m.Intent = ev.Intake.Intent
				m.Documents = append(m.Documents[:len(m.Documents):len(m.Documents)], ev.Intake.Documents...)
			}
		}
	}
}

// extensions maps the mime types intake produces to file extensions.
var extensions = map[string]string{
	"text/plain":                ".txt",
	"text/x-log":                ".log",
	"text/csv":                  ".csv",
	"text/tab-separated-values": ".tsv",
	"text/markdown":             ".md",
	"text/html":                 ".html",
	"application/json":          ".json",
	"application/x-ndjson":      ".ndjson",
	"application/yaml":          ".yaml",
	"application/x-yaml":        ".yaml",
	"application/xml":           ".xml",
	"application/toml":          ".toml",
	"text/x-diff":               ".diff",
	"text/x-go":                 ".go",
	"text/x-python":             ".py",
	"text/javascript":           ".js",
	"text/typescript":           ".ts",
	"text/x-java":               ".java",
	"text/x-rust":               ".rs",
	"text/x-c":                  ".c",
	"text/x-c++":                ".cpp",
	"text/x-shellscript":        ".sh",
	"application/sql":           ".sql",
	"text/x-sql":                ".sql",
	"text/css":                  ".css",
	"application/pdf":           ".pdf",
	"image/png":                 ".png",
	"image/jpeg":                ".jpg",
	"image/gif":                 ".gif",
	"image/webp":                ".webp",
}

// Extension is the file extension for a mime type, ".txt" for unknown text and ".bin" otherwise.
func Extension(mimeType string) string {
	mt, _, _ := mime.ParseMediaType(mimeType)
	if ext, ok := extensions[mt]; ok {
		return ext
	}
	if (DocumentRef{MimeType: mt}).IsText() {
		return ".txt"
	}
	return ".bin"
}

var fileTitle = regexp.MustCompile(`^[\w][\w.-]{0,80}\.[A-Za-z0-9]{1,8}$`)

// ContextDocumentName names the i-th (from 1) context item of a message: its title when the
// title is a file name already (app.log), user_context_{i} with the mime type's extension otherwise.
func ContextDocumentName(i int, title, mimeType string) string {
	if t := strings.TrimSpace(title); fileTitle.MatchString(t) && path.Ext(t) != "." {
		return t
	}
	return fmt.Sprintf("user_context_%d%s", i, Extension(mimeType))
}

// Message is what a person sends: text, and the files attached to it.
type Message struct {
	Text   string
	Author string
	// UserID is the account that writes; a new conversation belongs to it.
	UserID int64
	// Nonce is the composer's one-time token: a re-sent message is recorded once.
	Nonce string
	Files []File
	// Interrupt makes a message sent while the agent works stop its reply and be answered at
	// once, instead of waiting in the queue for the run to end (the A2A server's clients).
	Interrupt bool
}

// NewNonce returns a random one-time token for a Message (or a form that sends one).
func NewNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// File is an attached file, checked but not stored yet.
type File struct {
	Name     string
	MimeType string
	Content  []byte
}

// AnswerDocument reads the document that answered a file field: the DocumentRef the ledger
// put in the values (a map once read back from the log).
func AnswerDocument(v any) (DocumentRef, bool) {
	switch x := v.(type) {
	case DocumentRef:
		return x, true
	case map[string]any:
		b, err := jsonMarshal(x)
		if err != nil {
			return DocumentRef{}, false
		}
		var d DocumentRef
		if json.Unmarshal(b, &d) != nil || d.ID == 0 {
			return DocumentRef{}, false
		}
		return d, true
	}
	return DocumentRef{}, false
}

// HistoryDocuments lists the documents of a conversation's history, oldest first: those
// attached to the person's messages (with their intake's) and those given as answers.
func HistoryDocuments(history []Event) []DocumentRef {
	var out []DocumentRef
	for _, ev := range history {
		switch {
		case ev.Kind == EventUserMessage:
			out = append(out, ev.Documents...)
		case ev.Kind == EventQuestionResolved && ev.Resolution != nil:
			for _, k := range slices.Sorted(maps.Keys(ev.Resolution.Values)) {
				if d, ok := AnswerDocument(ev.Resolution.Values[k]); ok {
					out = append(out, d)
				}
			}
		}
	}
	return out
}
