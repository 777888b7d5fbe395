package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// newDocument is a document about to be stored.
type newDocument struct {
	name, title, mimeType string
	content               []byte
}

func uploads(files []domain.File) []newDocument {
	out := make([]newDocument, len(files))
	for i, f := range files {
		out[i] = newDocument{name: f.Name, mimeType: f.MimeType, content: f.Content}
	}
	return out
}

// insertDocuments stores documents of a conversation, names made unique among them, and
// returns their refs. They are attached to their message with attachDocuments.
func (db *DB) insertDocuments(ctx context.Context, tx *Tx, convID int64, label string, docs []newDocument) ([]domain.DocumentRef, error) {
	var refs []domain.DocumentRef
	used := map[string]bool{}
	now := formatTime(db.Now())
	for _, d := range docs {
		sum := sha256.Sum256(d.content)
		// Whoever named it (a person's upload, an A2A client, an agent), the name reads as it is.
		ref := domain.DocumentRef{Name: uniqueName(domain.FileName(d.name), used), Title: domain.CleanName(d.title), MimeType: d.mimeType,
			Size: int64(len(d.content)), SHA256: hex.EncodeToString(sum[:]), Label: label}
		id, err := insertID(ctx, tx, `INSERT INTO documents (conversation_id, label, name, title, mime_type, size, sha256, content, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, convID, label, ref.Name, ref.Title, ref.MimeType, ref.Size, ref.SHA256, d.content, now)
		if err != nil {
			return nil, fmt.Errorf("insert document: %w", err)
		}
		ref.ID = id
		refs = append(refs, ref)
	}
	return refs, nil
}

// attachDocuments attaches stored documents to the person's message (its event id).
func attachDocuments(ctx context.Context, tx *Tx, messageEventID int64, docs []domain.DocumentRef) error {
	for _, d := range docs {
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET message_event_id = ? WHERE id = ?`, messageEventID, d.ID); err != nil {
			return fmt.Errorf("attach document: %w", err)
		}
	}
	return nil
}

// uniqueName returns name, or name with a counter before its extension when used already.
func uniqueName(name string, used map[string]bool) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	n := name
	for i := 2; used[n]; i++ {
		n = fmt.Sprintf("%s-%d%s", base, i, ext)
	}
	used[n] = true
	return n
}

// RecordIntake stores what intake made of a person's message: its context items become
// user_context documents attached to the message, the language is set on the conversation,
// and an intake event records the intent.
func (db *DB) RecordIntake(ctx context.Context, runID, messageEventID int64, a domain.Analysis) (domain.Event, error) {
	var ev domain.Event
	err := db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.lockRun(ctx, runID); err != nil {
			return fmt.Errorf("intake of message %d: %w", messageEventID, err)
		}
		var convID int64
		var payload string
		if err := tx.QueryRowContext(ctx, `SELECT conversation_id, payload FROM events WHERE id = ? AND run_id = ? AND kind = 'user_message'`,
			messageEventID, runID).Scan(&convID, &payload); err != nil {
			return fmt.Errorf("intake of message %d: %w", messageEventID, err)
		}
		var msg domain.Event
		if err := json.Unmarshal([]byte(payload), &msg); err != nil {
			return fmt.Errorf("message %d: %w", messageEventID, err)
		}
		used := map[string]bool{}
		for _, d := range msg.Documents {
			used[d.Name] = true
		}
		docs := make([]newDocument, len(a.Items))
		for i, it := range a.Items {
			name := domain.ContextDocumentName(i+1, it.Title, it.MimeType)
			docs[i] = newDocument{name: uniqueName(name, used), title: it.Title, mimeType: it.MimeType, content: []byte(it.Content)}
		}
		refs, err := db.insertDocuments(ctx, tx, convID, domain.LabelUserContext, docs)
		if err != nil {
			return err
		}
		if err := attachDocuments(ctx, tx, messageEventID, refs); err != nil {
			return err
		}
		if a.Language != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE conversations SET language = ? WHERE id = ?`, a.Language, convID); err != nil {
				return fmt.Errorf("set language: %w", err)
			}
		}
		ev, err = db.insertEvent(ctx, tx, domain.Event{ConversationID: convID, RunID: runID, Kind: domain.EventIntake,
			Intake: &domain.Intake{MessageEventID: messageEventID, Intent: a.Intent, Language: a.Language, Documents: refs,
				Via: a.Via, Tokens: a.Tokens, Threshold: a.Threshold}})
		return err
	})
	return ev, err
}

// Document returns a document of the conversation with its content; ENOTFOUND for a
// document of any other conversation.
func (db *DB) Document(ctx context.Context, conversationID, id int64) (domain.Document, error) {
	var d domain.Document
	err := db.read.QueryRowContext(ctx, `SELECT id, name, title, mime_type, size, sha256, label, content FROM documents
		WHERE id = ? AND conversation_id = ?`, id, conversationID).
		Scan(&d.ID, &d.Name, &d.Title, &d.MimeType, &d.Size, &d.SHA256, &d.Label, &d.Content)
	if errors.Is(err, sql.ErrNoRows) {
		return d, domain.Errorf(domain.ENOTFOUND, "Document %d not found.", id)
	}
	if err != nil {
		return d, fmt.Errorf("document %d: %w", id, err)
	}
	return d, nil
}

// storeAnswerFiles stores the files answering a question's file fields as documents of the
// question and returns the values with each file's DocumentRef in its field.
func (db *DB) storeAnswerFiles(ctx context.Context, tx *Tx, convID int64, r domain.Resolution) (map[string]any, error) {
	values := maps.Clone(r.Values)
	if values == nil {
		values = map[string]any{}
	}
	for _, field := range slices.Sorted(maps.Keys(r.Files)) {
		f := r.Files[field]
		refs, err := db.insertDocuments(ctx, tx, convID, domain.LabelAnswer, []newDocument{{name: f.Name, mimeType: f.MimeType, content: f.Content}})
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE documents SET question_id = ? WHERE id = ?`, r.QuestionID, refs[0].ID); err != nil {
			return nil, fmt.Errorf("attach document: %w", err)
		}
		values[field] = refs[0]
	}
	return values, nil
}
