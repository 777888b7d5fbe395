package intake

import (
	"path"
	"regexp"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// codeLanguage is what a fence's language makes of its block: a type, and a title when
// "Code (lang)" would not read well.
type codeLanguage struct{ mime, title string }

// languages maps fence languages to types.
var languages = map[string]codeLanguage{
	"json":          {"application/json", "JSON"},
	"jsonc":         {"application/json", "JSON"},
	"json5":         {"application/json", "JSON"},
	"ndjson":        {"application/x-ndjson", "JSON lines"},
	"jsonl":         {"application/x-ndjson", "JSON lines"},
	"yaml":          {"application/yaml", "YAML"},
	"yml":           {"application/yaml", "YAML"},
	"csv":           {"text/csv", "CSV table"},
	"tsv":           {"text/tab-separated-values", "TSV table"},
	"go":            {"text/x-go", ""},
	"golang":        {"text/x-go", ""},
	"python":        {"text/x-python", ""},
	"py":            {"text/x-python", ""},
	"python3":       {"text/x-python", ""},
	"js":            {"text/javascript", ""},
	"javascript":    {"text/javascript", ""},
	"jsx":           {"text/javascript", ""},
	"mjs":           {"text/javascript", ""},
	"node":          {"text/javascript", ""},
	"ts":            {"text/typescript", ""},
	"typescript":    {"text/typescript", ""},
	"tsx":           {"text/typescript", ""},
	"java":          {"text/x-java", ""},
	"rust":          {"text/x-rust", ""},
	"rs":            {"text/x-rust", ""},
	"c":             {"text/x-c", ""},
	"h":             {"text/x-c", ""},
	"cpp":           {"text/x-c++", ""},
	"c++":           {"text/x-c++", ""},
	"cc":            {"text/x-c++", ""},
	"cxx":           {"text/x-c++", ""},
	"hpp":           {"text/x-c++", ""},
	"sh":            {"text/x-shellscript", ""},
	"bash":          {"text/x-shellscript", ""},
	"shell":         {"text/x-shellscript", ""},
	"zsh":           {"text/x-shellscript", ""},
	"console":       {"text/x-shellscript", ""},
	"shell-session": {"text/x-shellscript", ""},
	"sql":           {"application/sql", "SQL"},
	"postgresql":    {"application/sql", "SQL"},
	"postgres":      {"application/sql", "SQL"},
	"mysql":         {"application/sql", "SQL"},
	"sqlite":        {"application/sql", "SQL"},
	"diff":          {"text/x-diff", "Diff"},
	"patch":         {"text/x-diff", "Diff"},
	"xml":           {"application/xml", "XML"},
	"html":          {"text/html", "HTML"},
	"toml":          {"application/toml", "TOML"},
	"markdown":      {"text/markdown", "Markdown"},
	"md":            {"text/markdown", "Markdown"},
	"css":           {"text/css", "CSS"},
	"log":           {"text/x-log", "Log excerpt"},
	"text":          {"text/plain", "Text"},
	"txt":           {"text/plain", "Text"},
	"plain":         {"text/plain", "Text"},
	"plaintext":     {"text/plain", "Text"},
	"output":        {"text/plain", "Output"},
}

// fileNameRe finds file names with an extension people paste the contents of.
var fileNameRe = regexp.MustCompile(`(?i)\b[a-z0-9_][\w.\-]*\.(?:log|txt|out|err|trace|json|jsonl|ndjson|ya?ml|csv|tsv|go|py|js|mjs|cjs|jsx|ts|tsx|java|rs|c|h|cc|cpp|cxx|hpp|sh|bash|zsh|sql|diff|patch|xml|html?|css|toml|md|markdown)\b`)

// agentFileTitle is the rule domain.ContextDocumentName names documents by.
var agentFileTitle = regexp.MustCompile(`^[\w][\w.-]{0,80}\.[A-Za-z0-9]{1,8}$`)

// fileNameIn is the last file name in s (prose before a block, or a fence's info string)
// whose extension fits a block of type mime, or "". Only the end of a long line is read,
// the part nearest the block.
func fileNameIn(s, mime string) string {
	if len(s) > 512 {
		s = s[len(s)-512:]
	}
	names := fileNameRe.FindAllString(s, -1)
	for k := len(names) - 1; k >= 0; k-- {
		name := strings.TrimRight(names[k], ".-")
		if agentFileTitle.MatchString(name) && fits(path.Ext(name), mime) && !frameworks[strings.ToLower(name)] {
			return name
		}
	}
	return ""
}

// frameworks are names that look like files but name software.
var frameworks = map[string]bool{
	"node.js": true, "vue.js": true, "next.js": true, "nuxt.js": true, "react.js": true,
	"express.js": true, "three.js": true, "d3.js": true, "chart.js": true, "angular.js": true,
	"ember.js": true, "backbone.js": true, "moment.js": true, "socket.io": true, "alpine.js": true,
}

// sameExtension groups the spellings of an extension.
var sameExtension = map[string]string{
	".yml": ".yaml", ".htm": ".html", ".jsonl": ".ndjson", ".h": ".c",
	".cc": ".cpp", ".cxx": ".cpp", ".hpp": ".cpp", ".mjs": ".js", ".cjs": ".js", ".jsx": ".js",
	".tsx": ".ts", ".bash": ".sh", ".zsh": ".sh", ".patch": ".diff", ".markdown": ".md",
}

// fits reports whether a file with extension ext may hold a block of type mime: the type's
// own extension, or a plain-text one for logs, traces and plain text.
func fits(ext, mime string) bool {
	ext = strings.ToLower(ext)
	if e, ok := sameExtension[ext]; ok {
		ext = e
	}
	want := domain.Extension(mime)
	if e, ok := sameExtension[want]; ok {
		want = e
	}
	if ext == want {
		return true
	}
	switch ext {
	case ".log", ".txt", ".out", ".err", ".trace":
		return mime == "text/plain" || mime == "text/x-log"
	}
	return false
}
