package cql2

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
)

// Limits bound what Parse reads.
type Limits struct {
	// MaxChars is the longest filter, in characters.
	MaxChars int
	// MaxDepth is the deepest nesting of parentheses and NOTs.
	MaxDepth int
	// MaxNodes is the most predicates, operands and list items.
	MaxNodes int
}

// DefaultLimits are the records service's: room for any filter a person
// or a GIS client writes, none for one that would occupy the server.
func DefaultLimits() Limits { return Limits{MaxChars: 4096, MaxDepth: 16, MaxNodes: 256} }

// errAt is a syntax error at character pos.
func errAt(pos int, format string, args ...any) error {
	return domain.Invalid("invalid_filter", "filter", "filter, at character %d: %s", pos, fmt.Sprintf(format, args...))
}

// parser reads tokens by recursive descent.
type parser struct {
	toks  []token
	i     int
	depth int
	nodes int
	lim   Limits
}

// Parse reads src, a CQL2 text filter, into its expression.
func Parse(src string, lim Limits) (Expr, error) {
	if n := utf8.RuneCountInString(src); n > lim.MaxChars {
		return nil, domain.Invalid("filter_too_long", "filter", "filter is %d characters long; at most %d are read", n, lim.MaxChars)
	}
	if strings.TrimSpace(src) == "" {
		return nil, domain.Invalid("invalid_filter", "filter", "filter is empty; leave it out to select every feature")
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, lim: lim}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errAt(t.pos, "expected AND, OR or the end of the filter, found %s", t.describe())
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

// node counts one node against the limit.
func (p *parser) node(pos int) error {
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		return domain.Invalid("filter_too_complex", "filter", "filter, at character %d: more than %d predicates and operands; split the query or simplify it", pos, p.lim.MaxNodes)
	}
	return nil
}

// enter counts one level of nesting against the limit.
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return domain.Invalid("filter_too_deep", "filter", "filter, at character %d: nested more than %d levels deep (parentheses and NOT)", pos, p.lim.MaxDepth)
	}
	return nil
}

// or = and {OR and}
func (p *parser) or() (Expr, error) {
	var args []Expr
	for {
		e, err := p.and()
		if err != nil {
			return nil, err
		}
		args = append(args, e)
		if !p.peek().keyword("OR") {
			break
		}
		p.next()
	}
	if len(args) == 1 {
		return args[0], nil
	}
	return Or{Args: args}, nil
}

// and = not {AND not}
func (p *parser) and() (Expr, error) {
	var args []Expr
	for {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		args = append(args, e)
		if !p.peek().keyword("AND") {
			break
		}
		p.next()
	}
	if len(args) == 1 {
		return args[0], nil
	}
	return And{Args: args}, nil
}

// not = NOT not | primary
func (p *parser) not() (Expr, error) {
	t := p.peek()
	if !t.keyword("NOT") {
		return p.primary()
	}
	p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	e, err := p.not()
	if err != nil {
		return nil, err
	}
	return Not{Arg: e}, nil
}

// primary = "(" or ")" | TRUE | FALSE | predicate
func (p *parser) primary() (Expr, error) {
	t := p.peek()
	if t.kind == tLParen {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		e, err := p.or()
		p.depth--
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, errAt(c.pos, "expected ) to close the ( at character %d, found %s", t.pos, c.describe())
		}
		return e, nil
	}
	if err := p.node(t.pos); err != nil {
		return nil, err
	}
	left, err := p.scalar()
	if err != nil {
		return nil, err
	}
	if b, ok := left.(Bool); ok && !p.continuesPredicate() {
		return b, nil
	}
	return p.predicate(left)
}

// continuesPredicate reports whether the next token carries on a
// predicate after its first operand.
func (p *parser) continuesPredicate() bool {
	t := p.peek()
	return t.kind == tOp || t.keyword("LIKE") || t.keyword("BETWEEN") || t.keyword("IN") || t.keyword("IS") || t.keyword("NOT")
}

// predicate reads what follows a predicate's first operand.
func (p *parser) predicate(left Scalar) (Expr, error) {
	t := p.next()
	switch {
	case t.kind == tOp:
		right, err := p.operand()
		if err != nil {
			return nil, err
		}
		return Compare{Op: t.text, Left: left, Right: right}, nil
	case t.keyword("IS"):
		neg := false
		if p.peek().keyword("NOT") {
			p.next()
			neg = true
		}
		if n := p.next(); !n.keyword("NULL") {
			return nil, errAt(n.pos, "expected NULL after IS, found %s", n.describe())
		}
		return IsNull{Value: left, Negated: neg}, nil
	case t.keyword("NOT"):
		n := p.peek()
		if !n.keyword("LIKE") && !n.keyword("BETWEEN") && !n.keyword("IN") {
			return nil, errAt(n.pos, "expected LIKE, BETWEEN or IN after NOT, found %s", n.describe())
		}
		e, err := p.predicate(left)
		if err != nil {
			return nil, err
		}
		switch v := e.(type) {
		case Like:
			v.Negated = true
			return v, nil
		case Between:
			v.Negated = true
			return v, nil
		case In:
			v.Negated = true
			return v, nil
		}
		return e, nil
	case t.keyword("LIKE"):
		pt := p.peek()
		pat, err := p.operand()
		if err != nil {
			return nil, err
		}
		s, ok := pat.(String)
		if !ok {
			return nil, errAt(pt.pos, "LIKE takes a quoted pattern ('%%text%%'), found %s", pt.describe())
		}
		if endsInEscape(s.V) {
			return nil, errAt(pt.pos, "the LIKE pattern '%s' ends with the escape character \\, which escapes nothing: write \\\\ for a backslash itself (\\%% and \\_ for a literal %% or _)", s.V)
		}
		return Like{Value: left, Pattern: s}, nil
	case t.keyword("BETWEEN"):
		lo, err := p.operand()
		if err != nil {
			return nil, err
		}
		if a := p.next(); !a.keyword("AND") {
			return nil, errAt(a.pos, "expected AND between BETWEEN's two ends, found %s", a.describe())
		}
		hi, err := p.operand()
		if err != nil {
			return nil, err
		}
		return Between{Value: left, Low: lo, High: hi}, nil
	case t.keyword("IN"):
		return p.inList(left)
	}
	return nil, errAt(t.pos, "expected a comparison (=, <>, <, <=, >, >=), LIKE, BETWEEN, IN or IS [NOT] NULL after the operand, found %s", t.describe())
}

// inList reads "(" operand {"," operand} ")" after IN.
func (p *parser) inList(left Scalar) (Expr, error) {
	if o := p.next(); o.kind != tLParen {
		return nil, errAt(o.pos, "expected ( to open IN's list, found %s", o.describe())
	}
	var list []Scalar
	for {
		s, err := p.operand()
		if err != nil {
			return nil, err
		}
		list = append(list, s)
		c := p.next()
		if c.kind == tRParen {
			return In{Value: left, List: list}, nil
		}
		if c.kind != tComma {
			return nil, errAt(c.pos, "expected , or ) in IN's list, found %s", c.describe())
		}
	}
}

// operand is a scalar counted against the node limit.
func (p *parser) operand() (Scalar, error) {
	if err := p.node(p.peek().pos); err != nil {
		return nil, err
	}
	return p.scalar()
}

// reserved are the keywords that cannot name a property unquoted.
var reserved = map[string]bool{"AND": true, "OR": true, "NOT": true, "LIKE": true, "BETWEEN": true, "IN": true, "IS": true, "NULL": true}

// scalar = property | string | number | TRUE | FALSE | DATE(string) | TIMESTAMP(string)
func (p *parser) scalar() (Scalar, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return String{V: t.text}, nil
	case tQuoted:
		return Property{Name: t.text, Pos: t.pos}, nil
	case tNumber:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, errAt(t.pos, "%s is not a number this service reads (%v)", t.text, err)
		}
		return Number{V: v, Text: t.text}, nil
	case tIdent:
		up := strings.ToUpper(t.text)
		switch {
		case up == "TRUE" || up == "FALSE":
			return Bool{V: up == "TRUE"}, nil
		case (up == "DATE" || up == "TIMESTAMP") && p.peek().kind == tLParen:
			return p.instant(up)
		case reserved[up]:
			return nil, errAt(t.pos, "expected a property or a literal, found the keyword %s (quote a property of that name: \"%s\")", up, t.text)
		case p.peek().kind == tLParen:
			return nil, errAt(t.pos, "%s(...) is not a function this service knows: Basic CQL2 takes DATE('YYYY-MM-DD') and TIMESTAMP('YYYY-MM-DDTHH:MM:SSZ') only", t.text)
		}
		return Property{Name: t.text, Pos: t.pos}, nil
	}
	return nil, errAt(t.pos, "expected a property or a literal ('text', 12.5, TRUE, DATE('2019-10-01')), found %s", t.describe())
}

// instant reads ("'…'") after DATE or TIMESTAMP.
func (p *parser) instant(fn string) (Scalar, error) {
	p.next() // (
	s := p.next()
	if s.kind != tString {
		return nil, errAt(s.pos, "%s takes one quoted value, found %s", fn, s.describe())
	}
	if c := p.next(); c.kind != tRParen {
		return nil, errAt(c.pos, "expected ) after %s's value, found %s", fn, c.describe())
	}
	if fn == "DATE" {
		d, err := time.Parse(time.DateOnly, s.text)
		if err != nil {
			return nil, errAt(s.pos, "DATE('%s') is not a calendar date written YYYY-MM-DD", s.text)
		}
		if !InYearRange(d) {
			return nil, errAt(s.pos, "DATE('%s') is out of range: dates are of the years %04d to %04d", s.text, MinYear, MaxYear)
		}
		return Date{V: d}, nil
	}
	ts, err := time.Parse(time.RFC3339Nano, s.text)
	if err != nil {
		return nil, errAt(s.pos, "TIMESTAMP('%s') is not an RFC 3339 instant such as 2019-10-01T12:00:00Z", s.text)
	}
	if !InYearRange(ts) || !InYearRange(ts.UTC()) {
		return nil, errAt(s.pos, "TIMESTAMP('%s') is out of range: instants are of the years %04d to %04d, in UTC as well as as written", s.text, MinYear, MaxYear)
	}
	return Timestamp{V: ts.UTC()}, nil
}

// MinYear and MaxYear bound the years of the dates and instants a filter
// (or a datetime) may name: the four-digit years of RFC 3339 without year
// 0000, which PostgreSQL's date type does not have (it counts 1 BC).
const (
	MinYear = 1
	MaxYear = 9999
)

// InYearRange reports whether t's year is within MinYear and MaxYear as t
// is written (its location). Callers check t.UTC() as well when they
// compare in UTC: 9999-12-31T23:00:00-05:00 is year 10000 there.
func InYearRange(t time.Time) bool { return t.Year() >= MinYear && t.Year() <= MaxYear }

// endsInEscape reports whether a LIKE pattern ends with an unpaired
// backslash, CQL2's escape character: an odd run of them at its end.
func endsInEscape(pattern string) bool {
	n := 0
	for i := len(pattern) - 1; i >= 0 && pattern[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}
