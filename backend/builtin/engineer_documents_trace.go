package builtin

import (
	"regexp"
	"strings"
)

// traceSummary is what stands out in a stack trace: the error, and where in the
// application's own code it happened.
type traceSummary struct {
	// Language is Go, Java, Python or JavaScript (.NET and other "at" traces read as Java).
	Language string
	// Message is the panic or exception line, verbatim; Cause the last "Caused by:" line.
	Message, Cause string
	// Frame is the innermost frame of application code (not of the runtime, the standard
	// library or a dependency), verbatim; the innermost frame when none is.
	Frame string
}

var (
	goroutineRe = regexp.MustCompile(`^goroutine \d+ .*\]:$`)
	exceptionRe = regexp.MustCompile(`^(?:Exception in thread "[^"]*"\s+|Unhandled exception\.\s+|Uncaught\s+)?(?:[\w$]+\.)*[\w$]*(?:Exception|Error|Throwable)[\w$]*(?::\s.*)?$`)
	atFrameRe   = regexp.MustCompile(`^\s+at\s+\S`)
	pyFrameRe   = regexp.MustCompile(`^\s+File "([^"]+)", line \d+`)
	pyErrorRe   = regexp.MustCompile(`^[A-Za-z_][\w.]*(?::\s.*)?$`)
)

// libraryFrames start the frames of "at" traces that are not the application's own.
var libraryFrames = []string{
	"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "jakarta.",
	"org.springframework.", "org.apache.", "org.hibernate.", "org.junit.", "io.netty.", "reactor.",
	"com.fasterxml.", "com.google.", "io.grpc.", "okhttp3.", "System.", "Microsoft.", "node:", "new Promise",
}

// analyzeTrace finds the first stack trace in lines: a Go panic, a Python traceback, or a
// Java, .NET or JavaScript exception with "at" frames.
func analyzeTrace(lines []string) (*traceSummary, bool) {
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: "):
			return goTrace(lines, i), true
		case strings.HasPrefix(strings.TrimSpace(l), "Traceback (most recent call last):"):
			return pythonTrace(lines[i:]), true
		case atFrameRe.MatchString(l) && i+1 < len(lines) && atFrameRe.MatchString(lines[i+1]):
			return atTrace(lines, i), true
		}
	}
	return nil, false
}

// goTrace reads the panic at line i and the frames of the goroutine that panicked.
func goTrace(lines []string, i int) *traceSummary {
	t := &traceSummary{Language: "Go", Message: strings.TrimSpace(lines[i])}
	j := i + 1
	for j < len(lines) && !goroutineRe.MatchString(strings.TrimSpace(lines[j])) {
		j++
	}
	first := ""
	for j++; j+1 < len(lines); j += 2 {
		fn, at := strings.TrimSpace(lines[j]), strings.TrimSpace(lines[j+1])
		if fn == "" || strings.HasPrefix(fn, "goroutine ") || !strings.Contains(at, ".go:") {
			break
		}
		if strings.HasPrefix(fn, "created by ") {
			continue
		}
		if i := strings.LastIndex(at, " +0x"); i >= 0 {
			at = at[:i]
		}
		frame := fn + " at " + at
		if first == "" {
			first = frame
		}
		if !goLibrary(fn) {
			t.Frame = frame
			return t
		}
	}
	t.Frame = first
	return t
}

// goLibrary reports whether a frame's function belongs to the runtime or the standard
// library: its package path's first element has no dot, and it is not main.
func goLibrary(fn string) bool {
	if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
		fn = fn[:i]
	}
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return true // panic(...) and the like
	}
	pkg := fn[:slash+1+dot]
	if pkg == "main" {
		return false
	}
	elem, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(elem, ".")
}

// pythonTrace reads a traceback: the last exception line and the innermost frame outside
// the standard library and installed packages.
func pythonTrace(lines []string) *traceSummary {
	t := &traceSummary{Language: "Python"}
	first := ""
	inTrace := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "Traceback (most recent call last):"):
			inTrace, first, t.Frame = true, "", ""
		case !inTrace:
		case pyFrameRe.MatchString(l):
			frame := strings.TrimSpace(l)
			first = frame
			file := pyFrameRe.FindStringSubmatch(l)[1]
			if !strings.Contains(file, "site-packages") && !strings.Contains(file, "dist-packages") &&
				!strings.Contains(file, "/lib/python") && !strings.HasPrefix(file, "<") {
				t.Frame = frame
			}
		case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.TrimSpace(l) == "":
		case pyErrorRe.MatchString(l):
			t.Message, inTrace = strings.TrimSpace(l), false
		}
	}
	if t.Frame == "" {
		t.Frame = first
	}
	return t
}

// atTrace reads an exception whose frames start at line i: the exception line above them,
// the root cause, and the first frame of application code.
func atTrace(lines []string, i int) *traceSummary {
	t := &traceSummary{Language: "Java"}
	for j := i - 1; j >= 0 && j >= i-5; j-- {
		if l := strings.TrimSpace(lines[j]); exceptionRe.MatchString(l) || strings.Contains(l, "Exception") || strings.Contains(l, "Error") {
			t.Message = l
			break
		}
	}
	first := ""
	for _, l := range lines[i:] {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Caused by: "):
			t.Cause = l
		case strings.HasPrefix(l, "at "):
			switch {
			case strings.Contains(l, ".js:") || strings.Contains(l, ".ts:") || strings.Contains(l, "node:"):
				t.Language = "JavaScript"
			case strings.Contains(l, ".cs:line "):
				t.Language = ".NET"
			}
			if first == "" {
				first = l
			}
			if t.Frame == "" && !libraryFrame(strings.TrimPrefix(l, "at ")) {
				t.Frame = l
			}
		case strings.HasPrefix(l, "... ") || strings.HasPrefix(l, "Suppressed: ") || strings.HasPrefix(l, "--- "):
		default:
			// The trace ends at the first line that is none of its own.
			if t.Frame == "" {
				t.Frame = first
			}
			return t
		}
	}
	if t.Frame == "" {
		t.Frame = first
	}
	return t
}

// libraryFrame reports whether an "at" frame is of the platform or a dependency.
func libraryFrame(f string) bool {
	if strings.Contains(f, "node_modules") || strings.Contains(f, "(node:") || strings.Contains(f, "(internal/") {
		return true
	}
	for _, p := range libraryFrames {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// traceItems lists what stands out in a stack trace.
func traceItems(lang string, t *traceSummary) []string {
	var items []string
	if t.Message != "" {
		items = append(items, phrase(lang, "triage.error")+phrase(lang, "triage.colon")+verbatim(t.Message))
	}
	if t.Cause != "" {
		items = append(items, phrase(lang, "triage.root_cause")+phrase(lang, "triage.colon")+verbatim(t.Cause))
	}
	if t.Frame != "" {
		items = append(items, phrase(lang, "triage.frame")+phrase(lang, "triage.colon")+verbatim(t.Frame))
	}
	return items
}
