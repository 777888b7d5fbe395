package intake

import (
	"regexp"
	"strings"
)

const months = `(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)`

var (
	// logLineRe matches the start of a log line: an ISO, Go, syslog, Apache or klog
	// timestamp, a [LEVEL] or LEVEL token, logfmt, or a client address of an access log.
	logLineRe = regexp.MustCompile(`^(?:` +
		`\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}` +
		`|\[?\d{4}/\d{2}/\d{2}[ T]\d{2}:\d{2}` +
		`|\[?\d{2}:\d{2}:\d{2}` +
		`|\[?\d{2}/` + months + `/\d{4}:\d{2}:\d{2}` +
		`|` + months + ` [ 0-3]\d \d{2}:\d{2}:\d{2}` +
		`|[IWEF]\d{4} \d{2}:\d{2}:\d{2}` +
		`|\[?(?:TRACE|DEBUG|DBG|INFO|INF|NOTICE|WARN|WRN|WARNING|ERROR|ERR|FATAL|FTL|CRIT|CRITICAL|SEVERE|PANIC)\]?(?:[ \t:|]|$)` +
		`|(?:time|ts|level|lvl)=` +
		`|\d{1,3}(?:\.\d{1,3}){3} \S+ \S+ \[` +
		`)`)
	// traceStartRe matches lines that open or join a stack trace in Python, Go, Java, .NET
	// and Rust.
	traceStartRe = regexp.MustCompile(`^(?:` +
		`Traceback \(most recent call last\):` +
		`|goroutine \d+ \[` +
		`|panic: |fatal error: ` +
		`|Exception in thread "` +
		`|\s*Caused by: |\s*Suppressed: ` +
		`|thread '[^']*' panicked at |stack backtrace:|note: .*RUST_BACKTRACE` +
		`|During handling of the above exception|The above exception was the direct cause` +
		`|Unhandled [Ee]xception` +
		`|\[signal |created by |exit status \d+\s*$` +
		`)`)
	// frameRe matches a frame of a stack trace.
	frameRe = regexp.MustCompile(`^(?:` +
		`\s+at \S` +
		`|\s*\.\.\. \d+ (?:more|common frames omitted)` +
		`|\s+File "[^"]*", line \d+` +
		`|\t\S.*\.go:\d+` +
		`|\s*--- End of .*---` +
		`)`)
	// headerRe matches an exception's first line (java.lang.IllegalStateException: ...,
	// TypeError: ..., ValueError: ...).
	headerRe = regexp.MustCompile(`^(?:[\w$]+\.)*[\w$]*(?:Exception|Error|Throwable|Panic)(?::|\s*$)`)
	// goFuncRe matches the function line before a Go frame (main.main(), pkg.(*T).M(0x1)).
	goFuncRe = regexp.MustCompile(`^[\w./\-]+(?:\.\(\*?\w+\))?(?:\.[\w\-]+)*\(.*\)\s*$`)
)

// logTrace finds log excerpts and stack traces: a run of log lines, trace lines and their
// indented continuations (multi-line messages, Python source lines, Rust frames), with up
// to two blank lines inside. Two log lines or more make a log excerpt, with whatever traces
// are interleaved; otherwise two trace lines or more make a stack trace.
func (sc *scanner) logTrace(i int) (block, bool) {
	if !sc.logTraceStart(i) {
		return block{}, false
	}
	logs, traces := 0, 0
	python, takeNext := false, false
	last := i
	j := i
	for j < len(sc.lines) {
		if sc.lines[j].blank {
			k := sc.nextNonBlank(j, 3)
			if k < 0 || !sc.logTraceStart(k) {
				break
			}
			j = k
			continue
		}
		h := sc.head(j)
		switch {
		case takeNext:
			traces++
			takeNext = false
		case logLineRe.MatchString(h):
			logs++
		case traceStartRe.MatchString(h):
			traces++
			python = python || strings.HasPrefix(h, "Traceback")
			takeNext = strings.HasPrefix(h, "thread '") // Rust prints the message next
		case frameRe.MatchString(h):
			traces++
		case j+1 < len(sc.lines) && frameRe.MatchString(sc.head(j+1)):
			traces++ // an exception or a function before its frame
		case sc.lines[j].indent > 0:
			// a continuation
		case python && sc.lines[j-1].indent > 0:
			traces++ // the exception that ends a Python traceback
			python = false
		case traces > 0 && headerRe.MatchString(h):
			traces++
		default:
			goto done
		}
		last = j
		j++
	}
done:
	switch {
	case logs >= 2:
		return sc.span(i, last+1, "text/x-log", "Log excerpt"), true
	case traces >= 2:
		return sc.span(i, last+1, "text/plain", "Stack trace"), true
	}
	return block{}, false
}

// logTraceStart reports whether line i can start (or, after blank lines, go on with) a log
// excerpt or a stack trace.
func (sc *scanner) logTraceStart(i int) bool {
	h := sc.head(i)
	if logLineRe.MatchString(h) || traceStartRe.MatchString(h) || frameRe.MatchString(h) {
		return true
	}
	return i+1 < len(sc.lines) && frameRe.MatchString(sc.head(i+1)) &&
		(headerRe.MatchString(h) || goFuncRe.MatchString(h))
}
