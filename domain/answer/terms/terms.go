package terms

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"

	"github.com/arr-dev/arr/domain/answer"
)

// Body is the passage's text without its code lines (commands are
// quoted, not searched).
func Body(p answer.Passage) string {
	if !strings.Contains(p.Kinds, "c") {
		return p.Text
	}
	lines := strings.Split(p.Text, "\n")
	kept := lines[:0]
	for i, l := range lines {
		if i >= len(p.Kinds) || p.Kinds[i] != 'c' {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// stopwords are left out of queries and documents.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by for from has have how i in is it its of on or that the this to was were what when where which who whom why will with does do did can you your my we our they their them there these those than then so if not no into about over under after before between also more most other some such only own same too very just should would could may might must shall am been being give gives given use used using value default`) {
		m[w] = true
	}
	return m
}()

// Split splits text into index terms: lower-case words and numbers
// (identifiers with underscores, dotted names like "gc.auto" or
// "json.dumps" and CamelCase names are indexed whole and in parts, so
// "gc.auto" is a term "gc.autoDetach" does not hold), stop words left out, stemmed (Snowball English); and the
// symbols reference pages are about: operators ("//", "**", "^", "<<")
// and format directives ("%j", "%U", case kept).
func Split(s string) []string {
	out := symbols(s)
	word := func(w string) {
		if w == "" || stopwords[w] {
			return
		}
		if len(w) > 3 && !isNumber(w) {
			env := snowballstem.NewEnv(w)
			english.Stem(env)
			w = env.Current()
		}
		out = append(out, w)
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		parts := camelParts(f)
		f = strings.ToLower(strings.Trim(f, "_"))
		if len(parts) > 1 {
			// A CamelCase name whole and in its words: ZeroDivisionError
			// is about division by zero.
			out = append(out, f)
			for _, part := range parts {
				word(strings.ToLower(part))
			}
			continue
		}
		if strings.Contains(f, "_") {
			out = append(out, f) // the identifier whole (not stemmed)
			for _, part := range strings.Split(f, "_") {
				word(part)
			}
			continue
		}
		word(f)
	}
	return out
}

// camelParts splits a CamelCase name at its inner capitals
// ("ZeroDivisionError" into Zero, Division, Error; "HTTPServer" into
// HTTP, Server); a name with no inner capital is one part.
func camelParts(f string) []string {
	rs := []rune(f)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerBefore := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
		acronymEnd := unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if unicode.IsUpper(rs[i]) && (lowerBefore || acronymEnd) {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	out = append(out, string(rs[start:]))
	if len(out) > 1 {
		for _, p := range out {
			if !unicode.IsLetter([]rune(p)[0]) {
				return []string{f}
			}
		}
	}
	return out
}

// quotedSymbol is one or two punctuation characters in quotes, as a
// reference names an option or a flag: "the ',' option", "'#'".
var quotedSymbol = regexp.MustCompile(`['‘"“]([^\p{L}\p{N}\s'‘’"“”]{1,2})['’"”]`)

// operatorRunes make up operator terms.
const operatorRunes = "%/*^<>=!&|~+@"

// DottedName matches a dotted name: "gc.auto", "json.dumps", "os.path.join".
var DottedName = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+`)

// symbols are the whole-name, operator and directive terms of s.
func symbols(s string) []string {
	var out []string
	for _, m := range DottedName.FindAllString(s, -1) {
		out = append(out, strings.ToLower(m))
	}
	for _, m := range quotedSymbol.FindAllStringSubmatch(s, -1) {
		out = append(out, "'"+m[1]+"'")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+1 < len(s) && (s[i+1] >= 'a' && s[i+1] <= 'z' || s[i+1] >= 'A' && s[i+1] <= 'Z') &&
			(i+2 >= len(s) || !unicode.IsLetter(rune(s[i+2]))) {
			out = append(out, s[i:i+2])
			i++
			continue
		}
		if !strings.ContainsRune(operatorRunes, rune(c)) {
			continue
		}
		j := i
		for j < len(s) && j-i < 3 && strings.ContainsRune(operatorRunes, rune(s[j])) {
			j++
		}
		// An operator stands apart: not inside a URL, a path or a word.
		before := i == 0 || s[i-1] == ' ' || s[i-1] == '(' || s[i-1] == '\'' || s[i-1] == '"'
		after := j == len(s) || s[j] == ' ' || s[j] == ')' || s[j] == '\'' || s[j] == '"' || s[j] == ',' || s[j] == '?'
		if before && after {
			out = append(out, s[i:j])
		}
		i = j - 1
	}
	return out
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Stopword reports whether w (lower case) is a stop word, left out of
// queries and documents.
func Stopword(w string) bool { return stopwords[w] }
