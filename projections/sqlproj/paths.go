package sqlproj

import (
	"slices"
	"strings"
)

// Path pushdown. A replay spends most of its time turning each event's
// JSON into jsonb, yet a statement like the reads two values of
// it: :data->>'model' and :data->>'cost_micro_usd'. When a statement
// reads an event's data (or metadata) only through chains of -> and ->>
// with text keys, arr finds those values in the JSON itself (valueAt) and
// PostgreSQL parses just them: the chain is replaced by a jsonb of the
// value (for ->> as the last step, its text, #>> '{}'), which is what the
// chain yields by jsonb's own rules, NULL included. A statement that reads
// the whole value, or that arr cannot prove reads only such chains, gets
// the whole jsonb as before. The rules below are PostgreSQL's grammar:
// -> and ->> are "other operators", left-associative, binding looser than
// :: [ . ^ * / % + - AT COLLATE and tighter than comparisons, so a chain
// is a subexpression of its own only when neither neighbour binds
// tighter.

// A path is what a chain reads: root (data or metadata) -> keys[0] -> ….
type path struct {
	root string
	keys []string
}

func (p path) equal(q path) bool { return p.root == q.root && slices.Equal(p.keys, q.keys) }

// read is one chain of a statement: Text[start:end] reads path, as jsonb,
// or as text (its last step is ->>). qual is the alias that qualifies a
// column of :events (batch statements), "" if none.
type read struct {
	start, end int
	qual       string
	path       path
	text       bool
}

// tok is a significant token of a statement: no space, no comment, and
// the characters of an operator as one token.
type tok struct {
	item
	text string
}

const opChars = "+-*/<>=~!@#%^&|`?"

// tokenize splits a statement (already scanned once by Parse, so it
// lexes) into its significant tokens.
func tokenize(text string) []tok {
	sc := &scanner{src: text}
	var out []tok
	for {
		it, err := sc.next(0)
		if err != nil || it.kind == itemEOF {
			return out
		}
		switch it.kind {
		case itemSpace, itemLineComment, itemBlockComment:
			continue
		}
		t := tok{item: it, text: text[it.start:it.end]}
		if n := len(out); n > 0 && isOp(t.text) && isOp(out[n-1].text) && out[n-1].end == t.start {
			out[n-1].end, out[n-1].text = t.end, text[out[n-1].start:t.end]
			continue
		}
		out = append(out, t)
	}
}

func isOp(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(opChars, rune(s[i])) {
			return false
		}
	}
	return true
}

// word is the identifier a token names: an unquoted word folded to lower
// case, a quoted identifier unquoted; "" for anything else.
func (t tok) ident() string {
	switch {
	case t.kind == itemWord:
		return strings.ToLower(t.text)
	case t.kind == itemString && strings.HasPrefix(t.text, `"`):
		return strings.ReplaceAll(t.text[1:len(t.text)-1], `""`, `"`)
	}
	return ""
}

// isKeyword reports an unquoted word that is kw.
func (t tok) isKeyword(kw string) bool { return t.kind == itemWord && strings.EqualFold(t.text, kw) }

// literal is the text of a plain '…' string token (ok false for E'…',
// $$…$$, "…" or anything else).
func (t tok) literal() (string, bool) {
	if t.kind != itemString || !strings.HasPrefix(t.text, "'") {
		return "", false
	}
	return strings.ReplaceAll(t.text[1:len(t.text)-1], "''", "'"), true
}

// looseBefore reports whether the token before a chain's root (nil: the
// statement's start) binds looser than ->, so the chain starts a
// subexpression: an opening parenthesis or bracket, a comma, a comparison,
// a named argument's => or :=, or a keyword (but ZONE of AT TIME ZONE).
func looseBefore(t *tok) bool {
	if t == nil {
		return true
	}
	switch t.text {
	case "(", "[", ",", "=", "<", ">", "<=", ">=", "<>", "!=", "=>", ":=":
		return true
	}
	return t.kind == itemWord && !t.isKeyword("ZONE")
}

// tightAfter reports whether the token after a chain step's key binds the
// key tighter than ->: then the key is not a literal of its own.
func tightAfter(t *tok) bool {
	if t == nil {
		return false
	}
	switch {
	case t.text == "::" || t.text == "[" || t.text == "." || t.text == "(":
		return true
	case t.kind == itemString: // 'a' 'b' on two lines is one string
		return true
	case t.isKeyword("AT") || t.isKeyword("COLLATE"):
		return true
	case isOp(t.text) && strings.ContainsRune("+-*/%^", rune(t.text[0])) && t.text != "->" && t.text != "->>":
		return true
	}
	return false
}

// chain reads the -> and ->> steps after the root toks[k]: the keys, whether
// the last step is ->>, and the index of the last token of the chain (k
// itself when there is no step it can read).
func chain(toks []tok, k int) (keys []string, text bool, last int) {
	last = k
	for i := k + 1; i+1 < len(toks); i += 2 {
		op := toks[i].text
		if op != "->" && op != "->>" {
			break
		}
		key, ok := toks[i+1].literal()
		if !ok {
			break
		}
		var after *tok
		if i+2 < len(toks) {
			after = &toks[i+2]
		}
		if tightAfter(after) {
			break
		}
		keys, text, last = append(keys, key), op == "->>", i+1
	}
	return keys, text, last
}

func before(toks []tok, k int) *tok {
	if k == 0 {
		return nil
	}
	return &toks[k-1]
}

// eventReads finds the chains an arr:on statement reads of :data and
// :metadata; full names the roots it also reads whole.
func eventReads(st Statement) (reads []read, full map[string]bool) {
	full = map[string]bool{}
	toks := tokenize(st.Text)
	for k, t := range toks {
		if t.kind != itemBound || (t.word != "data" && t.word != "metadata") {
			continue
		}
		keys, text, last := chain(toks, k)
		if len(keys) == 0 || !looseBefore(before(toks, k)) {
			full[t.word] = true
			continue
		}
		reads = append(reads, read{start: t.start, end: toks[last].end, path: path{root: t.word, keys: keys}, text: text})
	}
	return reads, full
}

// afterFromItem are the words that can follow a FROM item without being
// its alias.
var afterFromItem = []string{"where", "group", "having", "order", "limit", "offset", "fetch", "for", "window", "union",
	"intersect", "except", "join", "inner", "left", "right", "full", "cross", "natural", "on", "using", "returning",
	"with", "tablesample", "when", "then", "set", "values", "select"}

// batchReads finds the chains an arr:batch statement reads of the data and
// metadata columns of :events. ok is false when the statement may read
// more than those chains (the whole column, a whole row, every column with
// *), or when arr cannot tell its columns from others: then it gets
// :events whole. reserved reports a word the definition's DDL uses (a
// table's column could be named data).
func batchReads(st Statement, reserved func(string) bool) (reads []read, ok bool) {
	toks := tokenize(st.Text)
	// The aliases of :events, and the name it goes by without one.
	aliases := map[string]bool{}
	aliasAt := map[int]bool{}
	for k, t := range toks {
		if t.kind != itemBound || t.word != "events" {
			continue
		}
		j := k + 1
		if j < len(toks) && toks[j].isKeyword("AS") {
			j++
		}
		if j < len(toks) && toks[j].ident() != "" && !(toks[j].kind == itemWord && slices.Contains(afterFromItem, toks[j].ident())) {
			if j+1 < len(toks) && toks[j+1].text == "(" {
				return nil, false // column aliases rename data
			}
			aliases[toks[j].ident()], aliasAt[j] = true, true
		}
	}
	for k, t := range toks {
		w := t.ident()
		switch {
		case t.kind == itemBound:
			continue
		case t.isKeyword("NATURAL"):
			return nil, false // joins on every column of the same name
		case t.text == "*" && star(toks, k):
			return nil, false
		case w != "" && aliases[w] && !aliasAt[k] && (k+1 >= len(toks) || toks[k+1].text != "."):
			return nil, false // a whole row of :events
		case strings.HasPrefix(w, "arr__") || w == "arr_events" || w == "arr_events_paths":
			return nil, false // arr's own names (arr_events, arr__p1)
		case w != "data" && w != "metadata":
			continue
		}
		if reserved(w) {
			return nil, false
		}
		start, qual := k, ""
		if k >= 2 && toks[k-1].text == "." {
			q := toks[k-2].ident()
			if q == "" || !aliases[q] || (k >= 3 && toks[k-3].text == ".") {
				return nil, false
			}
			start, qual = k-2, toks[k-2].text
		}
		keys, text, last := chain(toks, k)
		if len(keys) == 0 || !looseBefore(before(toks, start)) {
			return nil, false
		}
		reads = append(reads, read{start: toks[start].start, end: toks[last].end, qual: qual, path: path{root: w, keys: keys}, text: text})
	}
	return reads, true
}

// clauseWords follow a * that stands for every column (SELECT * FROM).
var clauseWords = []string{"from", "where", "group", "having", "order", "limit", "offset", "fetch", "union", "intersect",
	"except", "into", "returning", "window", "for", "on", "as"}

// star reports whether the * at toks[k] stands for columns (SELECT *,
// t.*, RETURNING *) rather than multiplying, or counting rows (count(*)).
func star(toks []tok, k int) bool {
	var prev, next *tok
	if k > 0 {
		prev = &toks[k-1]
	}
	if k+1 < len(toks) {
		next = &toks[k+1]
	}
	if prev != nil && prev.text == "(" && next != nil && next.text == ")" {
		return false
	}
	if prev != nil && prev.text == "." {
		return true
	}
	if next == nil || next.text == "," || next.text == ")" || next.kind == itemSemicolon {
		return true
	}
	if next.kind == itemWord && slices.Contains(clauseWords, strings.ToLower(next.text)) {
		return true
	}
	return false
}
