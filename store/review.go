package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/parley-chat/parley/domain"
)

// Inbox returns the questions still waiting, oldest first: one account's (userID), or
// everyone's (userID 0).
func (db *DB) Inbox(ctx context.Context, userID int64, limit int) ([]domain.InboxItem, error) {
	where, args := `q.state = 'pending'`, []any{}
	if userID != 0 {
		where, args = pendingFor, []any{userID, userID, userID, userID, userID}
	}
	query := `SELECT q.id, q.run_id, q.spec, q.created_at, ` + conversationColumns + `
		FROM questions q JOIN conversations c ON c.id = q.conversation_id LEFT JOIN users u ON u.id = c.user_id
		WHERE ` + where
	rows, err := db.read.QueryContext(ctx, query+` ORDER BY q.created_at, q.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	defer rows.Close()
	var out []domain.InboxItem
	for rows.Next() {
		var it domain.InboxItem
		var spec, asked string
		c := &it.Conversation
		dest, done := conversationDest(c)
		if err := rows.Scan(append([]any{&it.Question.ID, &it.Question.RunID, &spec, &asked}, dest...)...); err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
		done()
		id := it.Question.ID
		if err := json.Unmarshal([]byte(spec), &it.Question.Question); err != nil {
			return nil, fmt.Errorf("inbox: question %d: %w", id, err)
		}
		it.Question.ID = id
		it.Question.ConversationID, it.Question.AskedAt = c.ID, parseTime(asked)
		out = append(out, it)
	}
	return out, rows.Err()
}

// Search limits. A term matching more than rankLimit texts is common: ranking would score
// every match, so the newest matches are shown instead, which FTS5 reads in rowid order
// and stops early. At most hitLimit texts are read either way.
const (
	rankLimit = 1000
	hitLimit  = 300
	maxTerms  = 12
	// scanLimit bounds a common search with filters: only the newest scanLimit matches are
	// looked at, however few of them the filters keep.
	scanLimit = 5000
)

// SearchQuery turns what a person typed into an FTS5 query: each word quoted (so that
// FTS5's own syntax is never interpreted) and all of them required. It returns "" when
// nothing searchable was typed.
func SearchQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > maxTerms {
		words = words[:maxTerms]
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " ")
}

// searchSQL are the parts of a search that each store says its own way. The words are the
// first parameter (?1) wherever the statement needs them again.
type searchSQL struct{ match, matchFirst, rank, snippet string }

var (
	// ftsSearch is SQLite's FTS5: MATCH, bm25 rank (lower is better), snippet.
	ftsSearch = searchSQL{match: `search MATCH ?`, matchFirst: `search MATCH ?`, rank: `search.rank`,
		snippet: `snippet(search, 0, char(2), char(3), '…', 16)`}
	// pgSearch is PostgreSQL's full-text search over the same texts, with the configuration
	// parley (the English stemmer without stop words, diacritics removed: FTS5's porter
	// unicode61 remove_diacritics 2).
	pgSearch = searchSQL{match: `search.terms @@ plainto_tsquery('parley', ?)`,
		matchFirst: `search.terms @@ plainto_tsquery('parley', ?1)`,
		rank:       `ts_rank(search.terms, plainto_tsquery('parley', ?1), 2) DESC, search.rowid DESC`,
		snippet: `ts_headline('parley', search.body, plainto_tsquery('parley', ?1),
			'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=16, MinWords=6, ShortWord=2, MaxFragments=1, FragmentDelimiter=…')`}
)

// Search finds the conversations the filter selects whose messages, questions, answers or
// text documents hold every word of text. Each conversation comes once, with its best
// match: by relevance when the words are rare enough to rank, otherwise by recency. It
// also reports whether the recency fallback was taken.
func (db *DB) Search(ctx context.Context, text string, f domain.ConversationFilter) (hits []domain.SearchHit, common bool, err error) {
	// How best to read the matches depends on the words (a rare one, a common one).
	err = db.forTheValues(ctx, func(rd queryer) (err error) {
		hits, common, err = search(ctx, db.pg, rd, text, f)
		return err
	})
	return hits, common, err
}

// forTheValues runs fn with reads whose best plan depends on their values: on PostgreSQL in
// a read-only transaction that plans each statement for its values, not once for any as the
// store's connections do (see openPostgresDB); on SQLite on the readers.
func (db *DB) forTheValues(ctx context.Context, fn func(queryer) error) error {
	if !db.pg {
		return fn(db.read)
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storageError(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
		return storageError(err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	return storageError(tx.Commit())
}

func search(ctx context.Context, pg bool, rd queryer, text string, f domain.ConversationFilter) ([]domain.SearchHit, bool, error) {
	q, s := SearchQuery(text), ftsSearch
	if q == "" {
		return nil, false, nil
	}
	if pg {
		q, s = strings.NewReplacer(`"`, ``).Replace(q), pgSearch
	}
	var n int
	if err := rd.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM search WHERE `+s.match+` LIMIT ?) AS m`, q, rankLimit+1).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	common := n > rankLimit
	where, args := filterWhere(f)
	where, args = append([]string{s.matchFirst}, where...), append([]any{q}, args...)
	order := ` ORDER BY ` + s.rank
	if common {
		order = ` ORDER BY search.rowid DESC`
		// A rowid bound FTS5 applies as it reads: the scan stops past the newest matches
		// (the account's own, for one account's search: a person's words are not crowded
		// out by everyone else's).
		window, wargs := `SELECT rowid FROM search WHERE `+s.match, []any{q}
		if f.UserID != 0 {
			window += ` AND conversation_id IN (SELECT id FROM conversations WHERE user_id = ?)`
			wargs = append(wargs, f.UserID)
		}
		where = append(where, `search.rowid >= coalesce((SELECT min(rowid) FROM (`+window+` ORDER BY rowid DESC LIMIT ?) AS w), 0)`)
		args = append(append(args, wargs...), scanLimit)
	}
	// CROSS JOIN keeps the index the outer loop: it reads matches in the order asked for
	// and the LIMIT stops it.
	// A hit in a message, a question or an answer counts when its event is on the path of
	// the version its conversation shows.
	query := `SELECT search.kind, ` + s.snippet + `, coalesce(e.id, 0), coalesce(e.version, 0), ` + conversationColumns + `
		FROM search CROSS JOIN conversations c ON c.id = search.conversation_id LEFT JOIN users u ON u.id = c.user_id
		LEFT JOIN events e ON e.id = CASE search.kind WHEN 'document' THEN NULL
			WHEN 'answer' THEN (SELECT event_id FROM questions WHERE id = search.ref_id) ELSE search.ref_id END
		WHERE ` + strings.Join(where, ` AND `) + order + ` LIMIT ?`
	// The matches are read whole, then weighed: the versions they need are read on the same
	// connection, once the matches' rows are closed.
	type match struct {
		h               domain.SearchHit
		done            func()
		evID, evVersion int64
	}
	var matches []*match // by pointer: done fills in the conversation it scanned into
	rows, err := rd.QueryContext(ctx, query, append(args, hitLimit)...)
	if err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	for rows.Next() {
		m := &match{}
		var dest []any
		dest, m.done = conversationDest(&m.h.Conversation)
		if err := rows.Scan(append([]any{&m.h.Kind, &m.h.Snippet, &m.evID, &m.evVersion}, dest...)...); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("search: %w", err)
		}
		matches = append(matches, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	limit := f.PageSize()
	var out []domain.SearchHit
	seen := map[int64]int{}
	paths := map[int64]domain.Path{}
	for _, m := range matches {
		c := &m.h.Conversation
		if m.evID != 0 && (m.evVersion != 0 || c.Version != 0) {
			p, ok := paths[c.ID]
			if !ok {
				vs, shown, err := versionsOf(ctx, rd, c.ID)
				if err != nil {
					return nil, false, err
				}
				p = vs.Path(shown)
				paths[c.ID] = p
			}
			if !p.Has(m.evVersion, m.evID) {
				continue
			}
		}
		if i, ok := seen[c.ID]; ok {
			out[i].Matches++
			continue
		}
		if len(out) == limit {
			continue
		}
		m.done()
		m.h.Matches = 1
		seen[c.ID] = len(out)
		out = append(out, m.h)
	}
	return out, common, nil
}

// QuestionFacts returns the questions asked in [from, to), with their agent and outcome,
// for the figures.
func (db *DB) QuestionFacts(ctx context.Context, from, to time.Time) ([]domain.QuestionFact, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.agent, CASE WHEN c.kind = 'inbound' THEN 1 ELSE 0 END, q.created_at, coalesce(a.outcome, ''), coalesce(a.created_at, '')
		FROM questions q JOIN conversations c ON c.id = q.conversation_id LEFT JOIN answers a ON a.question_id = q.id
		WHERE q.created_at >= ? AND q.created_at < ? ORDER BY q.created_at, q.id`, formatTime(from), formatTime(to))
	if err != nil {
		return nil, fmt.Errorf("question facts: %w", err)
	}
	facts, err := scanQuestionFacts(rows)
	if err != nil {
		return nil, fmt.Errorf("question facts: %w", err)
	}
	return facts, nil
}

// scanQuestionFacts reads rows of (agent, inbound, asked at, outcome, resolved at) and closes them;
// an outcome and a time of resolution may be empty.
func scanQuestionFacts(rows *sql.Rows) ([]domain.QuestionFact, error) {
	defer rows.Close()
	var out []domain.QuestionFact
	for rows.Next() {
		var f domain.QuestionFact
		var asked, outcome, resolved string
		var inbound int
		if err := rows.Scan(&f.Agent, &inbound, &asked, &outcome, &resolved); err != nil {
			return nil, err
		}
		f.AskedAt, f.Outcome, f.Inbound = parseTime(asked), domain.Outcome(outcome), inbound == 1
		if resolved != "" {
			f.ResolvedAt = parseTime(resolved)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// forPerson is the condition that question q, of conversation c, is for the person whose
// id it takes four times: their own unless it was addressed to others (a group, an agent's
// approvers), or addressed to a group they are a member of, or to them (routed, or an
// escalation) unless it was asked on their behalf (c is theirs). The person's
// conversations come first (CROSS JOIN keeps that order), so that the cost is theirs,
// not that of every question waiting; a query that names no other way to q says
// "+q.state" for the same reason (see pendingFor).
const forPerson = `q.id IN (
	SELECT q1.id FROM conversations c1 CROSS JOIN questions q1 ON q1.conversation_id = c1.id AND q1.state = 'pending'
		WHERE c1.user_id = ? AND NOT EXISTS (SELECT 1 FROM question_audience a WHERE a.question_id = q1.id AND a.escalated = 0)
	UNION SELECT a.question_id FROM question_audience a
		WHERE a.user_id = ? OR a.group_id IN (SELECT group_id FROM group_members WHERE user_id = ? AND role = 'member'))
	AND NOT (c.user_id = ? AND EXISTS (SELECT 1 FROM question_audience a0 WHERE a0.question_id = q.id AND a0.escalated = 0))`

// pendingFor is the condition that q is pending and for the person (the id it takes five
// times): read from the person's questions, not from every question waiting.
const pendingFor = `+q.state = 'pending' AND ` + forPerson + ` AND ` + notApprovedBy

// notApprovedBy is the condition that the person (the id it takes) has not approved
// question q yet: a question that needs several approvals waits for others then.
const notApprovedBy = `NOT EXISTS (SELECT 1 FROM question_approvals qa JOIN users au ON au.name = qa.approved_by WHERE qa.question_id = q.id AND au.id = ?)`

// QuestionFor reports whether a question is for the person (see forPerson), answered or not.
func (db *DB) QuestionFor(ctx context.Context, questionID, userID int64) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM questions q JOIN conversations c ON c.id = q.conversation_id
		WHERE q.id = ? AND `+forPerson, questionID, userID, userID, userID, userID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("question %d for %d: %w", questionID, userID, err)
	}
	return n > 0, nil
}

// Waiting counts the questions still waiting: one account's (userID), or everyone's; latest
// is the conversation of the newest of them (zero when none waits).
func (db *DB) Waiting(ctx context.Context, userID int64) (n int, latest domain.Conversation, err error) {
	where, args := `q.state = 'pending'`, []any{}
	if userID != 0 {
		where = pendingFor
		args = append(args, userID, userID, userID, userID, userID)
	}
	// The newest is of the person's own conversations: another's (a group's question) would
	// not open for them.
	var newest int64
	err = db.read.QueryRowContext(ctx, `SELECT count(*), coalesce(max(CASE WHEN CAST(? AS BIGINT) IN (0, c.user_id) THEN q.id END), 0) FROM questions q JOIN conversations c ON c.id = q.conversation_id WHERE `+where,
		append([]any{userID}, args...)...).Scan(&n, &newest)
	if err != nil {
		return 0, latest, fmt.Errorf("count waiting: %w", err)
	}
	if newest == 0 {
		return n, latest, nil // none of the person's own (a group's, perhaps)
	}
	latest, err = scanConversation(db.read.QueryRowContext(ctx, `SELECT `+conversationColumns+conversationsFrom+` WHERE c.id = (SELECT conversation_id FROM questions WHERE id = ?)`, newest))
	if err != nil {
		return 0, latest, fmt.Errorf("count waiting: %w", err)
	}
	return n, latest, nil
}

// Audience returns the people a conversation's questions are for besides its owner: the
// members of the groups they were asked of or escalated to, and the people escalated to.
func (db *DB) Audience(ctx context.Context, convID int64) ([]int64, error) {
	ids, err := queryColumn[int64](ctx, db.read, `SELECT user_id FROM group_members WHERE role = 'member' AND group_id IN
			(SELECT a.group_id FROM question_audience a JOIN questions q ON q.id = a.question_id WHERE q.conversation_id = ? AND a.group_id IS NOT NULL)
		UNION SELECT a.user_id FROM question_audience a JOIN questions q ON q.id = a.question_id WHERE q.conversation_id = ? AND a.user_id IS NOT NULL`, convID, convID)
	if err != nil {
		return nil, fmt.Errorf("audience of %d: %w", convID, err)
	}
	return ids, nil
}
