package openai

import (
	"fmt"
	"regexp"
	"strings"
)

// languageNames are the English names of common ISO 639-1 codes, for the system prompt:
// models follow "German" more reliably than "de".
var languageNames = map[string]string{
	"ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech",
	"da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
	"et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew",
	"hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian",
	"ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "ms": "Malay",
	"nb": "Norwegian", "nl": "Dutch", "no": "Norwegian", "pl": "Polish", "pt": "Portuguese",
	"ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian", "sr": "Serbian",
	"sv": "Swedish", "sw": "Swahili", "ta": "Tamil", "th": "Thai", "tl": "Tagalog",
	"tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese", "zh": "Chinese",
}

// languageCode is what a language code may look like (en, pt-BR, zh_Hant): the code comes
// from a model's analysis, and nothing else of it reaches the system prompt.
var languageCode = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,2}$`)

// languageLine tells the model the person's language; "" when code is empty or no code.
func languageLine(code string) string {
	code = strings.TrimSpace(code)
	if !languageCode.MatchString(code) {
		return ""
	}
	primary := strings.ToLower(strings.FieldsFunc(code, func(r rune) bool { return r == '-' || r == '_' })[0])
	if name, ok := languageNames[primary]; ok {
		return fmt.Sprintf("The person writes in %s (%s); answer in that language.", name, code)
	}
	return fmt.Sprintf("The person writes in the language %s; answer in that language.", code)
}
