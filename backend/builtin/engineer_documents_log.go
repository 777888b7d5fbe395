package builtin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// logSummary is what stands out in a log.
type logSummary struct {
	// Levels counts the lines of each level (FATAL, ERROR, WARN, INFO, DEBUG, TRACE).
	Levels map[string]int
	// From and To are the earliest and latest timestamps, as written; Span the time between.
	From, To string
	Span     time.Duration
	// FirstError is the first ERROR (or FATAL) line, verbatim, at line FirstErrorAt (from 1);
	// without errors, the first WARN line.
	FirstError   string
	FirstErrorAt int
	FirstIsWarn  bool
	// Common is the first instance of the most frequent error message, seen Count times
	// once numbers and ids are left out, among Errors error lines.
	Common        string
	Count, Errors int
	// Trace is the first stack trace in the log, if any.
	Trace *traceSummary
}

// levelOrder is the order levels are listed in.
var levelOrder = []string{"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}

// levelNames maps the spellings of levels to the names counted.
var levelNames = map[string]string{
	"FATAL": "FATAL", "PANIC": "FATAL", "CRITICAL": "FATAL", "CRIT": "FATAL", "EMERG": "FATAL", "ALERT": "FATAL",
	"ERROR": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR",
	"WARN": "WARN", "WARNING": "WARN",
	"INFO": "INFO", "NOTICE": "INFO",
	"DEBUG": "DEBUG", "FINE": "DEBUG",
	"TRACE": "TRACE", "FINER": "TRACE", "FINEST": "TRACE",
}

var (
	// plainLevel is an upper-case level word; bracketLevel a lower-case one in brackets
	// (nginx, Apache); klogLevel the letter opening a klog line.
	plainLevel   = regexp.MustCompile(`\b(FATAL|PANIC|CRITICAL|CRIT|EMERG|ALERT|ERROR|ERR|SEVERE|WARN|WARNING|INFO|NOTICE|DEBUG|FINE|TRACE|FINER|FINEST)\b`)
	bracketLevel = regexp.MustCompile(`\[(fatal|panic|crit|critical|emerg|alert|error|err|warn|warning|info|notice|debug|trace)\]`)
	klogLevel    = regexp.MustCompile(`^([IWEF])\d{4} \d\d:\d\d:\d\d`)
	// logfmtKey finds key=value pairs of logfmt lines.
	logfmtKey = regexp.MustCompile(`(?:^|\s)(level|lvl|severity|msg|message|time|ts)=("(?:[^"\\]|\\.)*"|\S+)`)
	// leadingSeparators are what stands between a level and the message; loggerPrefix the
	// process id, thread and logger name some formats put there (Spring Boot, Logback).
	leadingSeparators = regexp.MustCompile(`^[\s:\]\)|>-]+`)
	loggerPrefix      = regexp.MustCompile(`^(?:\d+\s+---\s+)?(?:\[[^\]]*\]\s*)?[\w.$\[\]/-]+\s*(?: - | : )`)
)

// timestamps are the timestamp forms recognized near the start of a line, with the layouts
// that parse them once ',' is read as '.' and 'T' as ' '.
var timestamps = []struct {
	re      *regexp.Regexp
	layouts []string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?`),
		[]string{"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999"}},
	{regexp.MustCompile(`\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})?`), []string{"2006/01/02 15:04:05.999999999"}},
	{regexp.MustCompile(`\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}`), []string{"02/Jan/2006:15:04:05 -0700"}},
	{regexp.MustCompile(`[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d`), []string{"Jan _2 15:04:05"}},
	{regexp.MustCompile(`\d{4} \d\d:\d\d:\d\d\.\d{1,9}`), []string{"0102 15:04:05.999999999"}},
}

// logLine is what one line of a log says.
type logLine struct {
	level, msg string
	at         time.Time
	atText     string
}

// analyzeLog summarizes lines as a log; ok is false when too few lines carry a level or a
// timestamp for them to be one.
func analyzeLog(lines []string) (*logSummary, bool) {
	s := &logSummary{Levels: map[string]int{}}
	marked, leveled, nonBlank := 0, 0, 0
	var from, to time.Time
	groups := map[string]int{}
	firstOf := map[string]string{}
	firstWarn, firstWarnAt := "", 0
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		nonBlank++
		ll := parseLogLine(line)
		if ll.level == "" && ll.atText == "" {
			continue
		}
		marked++
		if !ll.at.IsZero() {
			if from.IsZero() || ll.at.Before(from) {
				from, s.From = ll.at, ll.atText
			}
			if to.IsZero() || !ll.at.Before(to) {
				to, s.To = ll.at, ll.atText
			}
		}
		if ll.level == "" {
			continue
		}
		leveled++
		s.Levels[ll.level]++
		switch ll.level {
		case "ERROR", "FATAL":
			s.Errors++
			if s.FirstError == "" {
				s.FirstError, s.FirstErrorAt = line, i+1
			}
			key := errorKey(ll.msg)
			groups[key]++
			if _, ok := firstOf[key]; !ok {
				firstOf[key] = ll.msg
			}
			if n := groups[key]; n > s.Count {
				s.Count, s.Common = n, firstOf[key]
			}
		case "WARN":
			if firstWarn == "" {
				firstWarn, firstWarnAt = line, i+1
			}
		}
	}
	// A fifth of the lines marked is a log with long entries (traces, dumps); timestamps
	// alone, without any level, must be on most lines (JSON data has timestamps too).
	if marked < 2 || marked*5 < nonBlank || (leveled == 0 && marked*2 < nonBlank) {
		return nil, false
	}
	if s.FirstError == "" && firstWarn != "" {
		s.FirstError, s.FirstErrorAt, s.FirstIsWarn = firstWarn, firstWarnAt, true
	}
	if s.From != s.To {
		s.Span = to.Sub(from)
	}
	if tr, ok := analyzeTrace(lines); ok {
		s.Trace = tr
	}
	return s, true
}

// parseLogLine reads the level, message and timestamp of a line: a JSON object, logfmt or
// plain text.
func parseLogLine(line string) logLine {
	var ll logLine
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		var obj map[string]any
		if json.Unmarshal([]byte(t), &obj) == nil {
			ll.level = levelNames[strings.ToUpper(firstString(obj, "level", "lvl", "severity", "log.level"))]
			ll.msg = firstString(obj, "msg", "message", "error")
			ll.atText = firstString(obj, "time", "ts", "timestamp", "@timestamp")
			ll.at = parseTime(ll.atText)
			return ll
		}
	}
	if strings.Contains(line, "level=") || strings.Contains(line, "lvl=") || strings.Contains(line, "severity=") {
		for _, kv := range logfmtKey.FindAllStringSubmatch(line, -1) {
			v := kv[2]
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			switch kv[1] {
			case "level", "lvl", "severity":
				ll.level = levelNames[strings.ToUpper(v)]
			case "msg", "message":
				ll.msg = v
			case "time", "ts":
				ll.atText, ll.at = v, parseTime(v)
			}
		}
		if ll.level != "" {
			if ll.msg == "" {
				ll.msg = line
			}
			return ll
		}
		ll = logLine{}
	}
	head := line[:min(len(line), 120)]
	ll.atText, ll.at = findTime(head)
	end := -1
	if m := klogLevel.FindStringSubmatch(line); m != nil {
		ll.level = map[string]string{"I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL"}[m[1]]
		end = strings.Index(line, "]") + 1
		if end == 0 {
			end = len(m[0])
		}
	} else if loc := plainLevel.FindStringSubmatchIndex(head); loc != nil {
		ll.level, end = levelNames[head[loc[2]:loc[3]]], loc[1]
	} else if loc := bracketLevel.FindStringSubmatchIndex(head); loc != nil {
		ll.level, end = levelNames[strings.ToUpper(head[loc[2]:loc[3]])], loc[1]
	}
	if end >= 0 {
		ll.msg = leadingSeparators.ReplaceAllString(line[end:], "")
		ll.msg = loggerPrefix.ReplaceAllString(ll.msg, "")
	}
	return ll
}

// firstString is the first of keys that obj has as a string (or a number, for times).
func firstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := obj[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ""
}

// findTime finds a timestamp in the start of a line.
func findTime(head string) (string, time.Time) {
	for _, ts := range timestamps {
		if loc := ts.re.FindStringIndex(head); loc != nil && loc[0] < 48 {
			text := head[loc[0]:loc[1]]
			return text, parseTime(text)
		}
	}
	return "", time.Time{}
}

// parseTime parses a timestamp in any of the recognized forms, or seconds since 1970.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 1e9 && f < 1e10 {
		return time.Unix(0, int64(f*1e9)).UTC()
	}
	norm := strings.Replace(strings.Replace(s, ",", ".", 1), "T", " ", 1)
	for _, ts := range timestamps {
		for _, layout := range ts.layouts {
			if t, err := time.Parse(layout, norm); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

var (
	uuidRe   = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	hexIDRe  = regexp.MustCompile(`\b(?:0x)?[0-9a-fA-F]{8,}\b`)
	numberRe = regexp.MustCompile(`\d+`)
)

// errorKey is an error message with what varies between its instances left out: ids and
// numbers.
func errorKey(msg string) string {
	msg = uuidRe.ReplaceAllString(msg, "<id>")
	msg = hexIDRe.ReplaceAllStringFunc(msg, func(s string) string {
		if strings.ContainsAny(s, "0123456789") {
			return "<id>"
		}
		return s // a word such as "deadbeef"
	})
	return strings.TrimSpace(numberRe.ReplaceAllString(msg, "#"))
}

// logItems lists what stands out in a log.
func logItems(lang string, s *logSummary) []string {
	var items []string
	var counts []string
	for _, lv := range levelOrder {
		if n := s.Levels[lv]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, lv))
		}
	}
	if len(counts) > 0 {
		items = append(items, phrase(lang, "triage.levels")+phrase(lang, "triage.colon")+strings.Join(counts, " · "))
	}
	if s.From != "" && s.Span > 0 {
		items = append(items, fmt.Sprintf("%s → %s (%s)", verbatim(s.From), verbatim(s.To), span(s.Span)))
	}
	switch {
	case s.FirstError != "" && s.FirstIsWarn:
		items = append(items, fmt.Sprintf(phrase(lang, "triage.first_warning"), s.FirstErrorAt)+phrase(lang, "triage.colon")+verbatim(s.FirstError))
	case s.FirstError != "":
		items = append(items, fmt.Sprintf(phrase(lang, "triage.first_error"), s.FirstErrorAt)+phrase(lang, "triage.colon")+verbatim(s.FirstError))
	default:
		items = append(items, phrase(lang, "triage.no_problems"))
	}
	if s.Count > 1 && verbatim(s.Common) != "" {
		items = append(items, fmt.Sprintf(phrase(lang, "triage.frequent"), s.Count, s.Errors)+phrase(lang, "triage.colon")+verbatim(s.Common))
	}
	if s.Trace != nil && s.Trace.Message != "" {
		item := phrase(lang, "triage.first_trace") + phrase(lang, "triage.colon") + verbatim(s.Trace.Message)
		if s.Trace.Frame != "" {
			item += ", " + verbatim(s.Trace.Frame)
		}
		items = append(items, item)
	}
	return items
}

// span writes a time span to the second, or to the millisecond when shorter.
func span(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
