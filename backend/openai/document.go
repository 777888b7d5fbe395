package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parley-chat/parley/domain"
)

// readToolName is the tool that reads a document listed in the conversation. The agent runs
// it itself, within the step: the person is not asked.
const readToolName = "read_document"

// Bounds of read_document. A small context window lowers both limits (see readLimits).
const (
	defaultReadLimit = 20000
	maxReadLimit     = 50000
	minReadLimit     = 1000
	// maxReadRounds is how many replies of one step may read documents; the model is then
	// told to answer with what it has.
	maxReadRounds = 8
)

// library is what the model may read in a step: the documents the history shows it (listed
// on the person's messages, or given as answers to file fields), and no other document of
// the conversation.
type library struct {
	docs   domain.Documents
	byID   map[int64]domain.DocumentRef
	byName map[string]domain.DocumentRef // the newest document of each name
	order  []int64
}

// listedDocuments gathers the documents of history; nil when there are none.
func listedDocuments(history []domain.Event, docs domain.Documents) *library {
	refs := domain.HistoryDocuments(history)
	if len(refs) == 0 {
		return nil
	}
	lib := &library{docs: docs, byID: map[int64]domain.DocumentRef{}, byName: map[string]domain.DocumentRef{}}
	for _, d := range refs {
		if _, ok := lib.byID[d.ID]; !ok {
			lib.order = append(lib.order, d.ID)
		}
		lib.byID[d.ID] = d
		if old, ok := lib.byName[d.Name]; !ok || d.ID >= old.ID {
			lib.byName[d.Name] = d
		}
	}
	return lib
}

// available lists the readable documents for a model that asked for another one.
func (lib *library) available() string {
	parts := make([]string, len(lib.order))
	for i, id := range lib.order {
		parts[i] = fmt.Sprintf("id %d %s", id, lib.byID[id].Name)
	}
	return strings.Join(parts, ", ")
}

// readLimits are the default and largest slice read_document returns: 20000 and 50000 bytes,
// or less when a quarter of the context window would not hold them.
func (a *Agent) readLimits() (def, limit int) {
	limit = min(maxReadLimit, max(minReadLimit, a.cfg.ContextWindow*bytesPerToken/4))
	return min(defaultReadLimit, limit), limit
}

// readArgs are read_document's arguments, decoded.
type readArgs struct {
	id            int64
	name          string
	offset, limit int64
}

// read runs one read_document call and returns its result for the model. Mistakes of the
// model (an unknown id, bad arguments) are results too; only a failing store or a cancelled
// step is an error.
func (a *Agent) read(ctx context.Context, lib *library, c toolCall) (string, error) {
	args, err := decodeRead(c.Arguments)
	if err != nil {
		return fmt.Sprintf("Error: %v. Expected arguments: {\"id\": 12, \"offset\": 0, \"limit\": 20000} (offset and limit optional).", err), nil
	}
	ref, ok := lib.byID[args.id]
	if !ok && args.name != "" {
		ref, ok = lib.byName[args.name]
	}
	if !ok {
		what := fmt.Sprintf("document %d", args.id)
		if args.id == 0 {
			what = fmt.Sprintf("document named %q", args.name)
		}
		return fmt.Sprintf("Error: there is no %s in this conversation. The documents you can read: %s.", what, lib.available()), nil
	}
	if lib.docs == nil {
		return fmt.Sprintf("Error: document %d cannot be read in this conversation.", ref.ID), nil
	}
	doc, err := lib.docs.Document(ctx, ref.ID)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case domain.ErrorCode(err) == domain.ENOTFOUND:
		return fmt.Sprintf("Error: document %d (%s) is no longer stored.", ref.ID, ref.Name), nil
	case err != nil:
		return "", a.faultf(err, "could not read document %d for the model: %v", ref.ID, err)
	}
	if doc.Name == "" {
		doc.DocumentRef = ref
	}
	size := int64(len(doc.Content))
	head := fmt.Sprintf("document %d %s, %s, %s", doc.ID, doc.Name, doc.MimeType, domain.ByteSize(size))
	if !doc.Readable() {
		return head + ": binary content, which cannot be shown as text.", nil
	}
	def, limit := a.readLimits()
	if args.limit <= 0 {
		args.limit = int64(def)
	}
	args.limit = min(args.limit, int64(limit))
	if args.offset >= size && size > 0 {
		return fmt.Sprintf("%s: offset %d is past its end (%d bytes).", head, args.offset, size), nil
	}
	start, end := slice(doc.Content, args.offset, args.limit)
	switch {
	case start == 0 && end == size:
		head += fmt.Sprintf(", bytes 0–%d of %d (all of it)", end, size)
	case end == size:
		head += fmt.Sprintf(", bytes %d–%d of %d (the end)", start, end, size)
	default:
		head += fmt.Sprintf(", bytes %d–%d of %d; call again with offset %d for more", start, end, size, end)
	}
	return head + "\n\n" + strings.ToValidUTF8(string(doc.Content[start:end]), "\uFFFD"), nil
}

// slice bounds the bytes [offset, offset+limit) of b to whole UTF-8 characters: the start
// moves back to the character it falls in, the end back before a character it would cut.
// It always advances by one character at least.
func slice(b []byte, offset, limit int64) (start, end int64) {
	size := int64(len(b))
	start = max(0, min(offset, size))
	for i := 0; i < utf8.UTFMax-1 && start > 0 && start < size && !utf8.RuneStart(b[start]); i++ {
		start--
	}
	end = min(size, start+max(1, limit))
	for end < size && end > start && !utf8.RuneStart(b[end]) {
		end--
	}
	if end == start && start < size {
		_, n := utf8.DecodeRune(b[start:])
		end = start + int64(n)
	}
	return start, end
}

// decodeRead reads read_document's arguments. Numbers may come as JSON numbers or as text;
// an id that is not a number is taken for the document's name.
func decodeRead(args string) (readArgs, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return readArgs{}, errors.New("the arguments must be a JSON object")
	}
	var r readArgs
	if s, ok := m["name"].(string); ok {
		r.name = strings.TrimSpace(s)
	}
	if v, ok := m["id"]; ok && v != nil {
		id, err := integer(v)
		switch {
		case err == nil:
			r.id = id
		case isText(v) && r.name == "":
			r.name = strings.TrimSpace(v.(string))
		default:
			return readArgs{}, fmt.Errorf("id %v", err)
		}
	}
	if r.id == 0 && r.name == "" {
		return readArgs{}, errors.New("id is required: the number of a document in AVAILABLE_DOCUMENTS")
	}
	for _, f := range []struct {
		key string
		to  *int64
	}{{"offset", &r.offset}, {"limit", &r.limit}} {
		if v, ok := m[f.key]; ok && v != nil {
			n, err := integer(v)
			if err != nil || n < 0 {
				return readArgs{}, fmt.Errorf("%s must be a whole number of bytes, 0 or more", f.key)
			}
			*f.to = n
		}
	}
	return r, nil
}

// integer reads a whole number written as a JSON number or as text.
func integer(v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, errors.New("must be a whole number")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), nil
	}
	return 0, errors.New("must be a whole number")
}

func isText(v any) bool {
	_, ok := v.(string)
	return ok
}
