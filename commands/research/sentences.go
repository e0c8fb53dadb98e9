package research

// Sentences as quotable text: the name a definition term gives its
// description, the one-line commands a sentence introduces, and what is
// code rather than prose.

import (
	"regexp"
	"strings"
	"unicode"
)

// reCommand is a one-line shell command: a program and its arguments.
var reCommand = regexp.MustCompile(`^(?:\$ |% )?([a-z][a-z0-9_.-]*)( +[^\s]+){1,8}$`)

// codeWords open a line of program code, not a shell command.
var codeWords = map[string]bool{"import": true, "from": true, "def": true, "class": true, "return": true, "print": true,
	"for": true, "if": true, "elif": true, "else": true, "while": true, "with": true, "del": true, "raise": true, "assert": true,
	"yield": true, "lambda": true, "pass": true, "try": true, "except": true, "finally": true, "global": true, "nonlocal": true,
	"async": true, "await": true, "var": true, "let": true, "const": true, "function": true, "select": true, "insert": true,
	"update": true, "delete": true, "create": true, "alter": true, "drop": true}

// command returns code that is a one-line shell command ("python3 -m venv
// tutorial-env"), without its prompt.
func command(code string) (string, bool) {
	code = strings.TrimSpace(code)
	if len(code) > 80 || strings.ContainsAny(code, "\n(){}=;<>|&`'\"") {
		return "", false
	}
	m := reCommand.FindStringSubmatch(code)
	if m == nil {
		return "", false
	}
	if codeWords[m[1]] {
		return "", false // a statement, not a command
	}
	return strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(code, "$ "), "% "), " "), true
}

// termPrefixes are the keywords before a name in an API entry's term.
var termPrefixes = []string{"exception ", "class ", "abstractmethod ", "classmethod ", "staticmethod ", "property ",
	"coroutine ", "async ", "await ", "awaitable ", "method ", "function ", "attribute ", "data ", "opcode ", "decorator "}

var (
	reIdent    = regexp.MustCompile(`^[A-Za-z_][\w.]*[A-Za-z0-9_]$`)
	reTermWord = regexp.MustCompile(`^[A-Za-z][A-Za-z '-]{0,38}[A-Za-z]$`)
)

// termName is what a definition term names, for a sentence of its
// description to carry: "shutil.copy2()" for "shutil.copy2(src, dst, *,
// follow_symlinks=True)", "ModuleNotFoundError" for "exception
// ModuleNotFoundError", "decorator" for a glossary's "decorator"; "" when
// the term is no plain name.
func termName(term string) string {
	t := strings.TrimSpace(term)
	kind := ""
	for again := true; again; {
		again = false
		for _, p := range termPrefixes {
			if strings.HasPrefix(t, p) {
				t, kind, again = strings.TrimSpace(t[len(p):]), p, true
			}
		}
	}
	name, call := t, false
	if i := strings.IndexByte(t, '('); i > 0 {
		name, call = t[:i], true
	}
	switch {
	case reIdent.MatchString(name):
		if call && kind != "class " && kind != "exception " {
			return name + "()"
		}
		return name
	case !call && reTermWord.MatchString(t):
		return t
	}
	return ""
}

// mentions reports whether s names subject (its last dotted part, in any
// case).
func mentions(s, subject string) bool {
	name := strings.TrimSuffix(subject, "()")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Contains(strings.ToLower(s), strings.ToLower(name))
}

// quotable reports whether a sentence can stand in an answer's prose: not
// code, markup or navigation, with letters enough to be a sentence.
func quotable(s string) bool {
	if codeLike.MatchString(s) {
		return false
	}
	letters, symbols := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case strings.ContainsRune("(){}[]=<>_*|\\/", r):
			symbols++
		}
	}
	return letters >= 12 && symbols*6 < letters
}

// changeNote opens a version note.
var changeNote = regexp.MustCompile(`^(Changed|New|Deprecated|Removed) (in|since) version\b`)
