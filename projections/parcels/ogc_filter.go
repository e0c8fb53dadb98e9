package parcels

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/cql2"
)

// filterSQL translates a CQL2 expression over c's queryables into a SQL
// condition: every property is one of c's queryables (its column
// expression, written in Collections), every literal a bind parameter
// appended to args. A property c does not have is a validation error
// naming it and listing the queryables; operands of different types are
// one naming both.
func filterSQL(c Collection, e cql2.Expr, args []any) (string, []any, error) {
	t := translator{c: c, args: args}
	sql, err := t.expr(e)
	return sql, t.args, err
}

type translator struct {
	c    Collection
	args []any
}

func (t *translator) expr(e cql2.Expr) (string, error) {
	switch v := e.(type) {
	case cql2.And:
		return t.list(v.Args, " AND ")
	case cql2.Or:
		return t.list(v.Args, " OR ")
	case cql2.Not:
		s, err := t.expr(v.Arg)
		return "(NOT " + s + ")", err
	case cql2.Bool:
		if v.V {
			return "true", nil
		}
		return "false", nil
	case cql2.Compare:
		l, r, err := t.pair(v.Left, v.Right, v.Op)
		return "(" + l + " " + v.Op + " " + r + ")", err
	case cql2.IsNull:
		s, _, err := t.scalar(v.Value, "")
		if v.Negated {
			return "(" + s + " IS NOT NULL)", err
		}
		return "(" + s + " IS NULL)", err
	case cql2.Like:
		s, typ, err := t.scalar(v.Value, "string")
		if err != nil {
			return "", err
		}
		if typ != "string" {
			return "", domain.Invalid("invalid_filter", "filter", "filter: LIKE compares text, and %s is %s", describe(v.Value), typ)
		}
		p := t.bind(v.Pattern.V, "text")
		return "(" + s + not(v.Negated) + ` LIKE ` + p + ` ESCAPE '\')`, nil
	case cql2.Between:
		l, lo, err := t.pair(v.Value, v.Low, "BETWEEN")
		if err != nil {
			return "", err
		}
		_, hi, err := t.pair(v.Value, v.High, "BETWEEN")
		return "(" + l + not(v.Negated) + " BETWEEN " + lo + " AND " + hi + ")", err
	case cql2.In:
		var l string
		items := make([]string, len(v.List))
		for i, it := range v.List {
			var err error
			if l, items[i], err = t.pair(v.Value, it, "IN"); err != nil {
				return "", err
			}
		}
		return "(" + l + not(v.Negated) + " IN (" + strings.Join(items, ", ") + "))", nil
	}
	return "", fmt.Errorf("cql2: an expression of type %T", e)
}

func not(n bool) string {
	if n {
		return " NOT"
	}
	return ""
}

func (t *translator) list(args []cql2.Expr, sep string) (string, error) {
	parts := make([]string, len(args))
	for i, a := range args {
		s, err := t.expr(a)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return "(" + strings.Join(parts, sep) + ")", nil
}

// pair translates two operands compared by op: of one type, the literal
// read as the property's type.
func (t *translator) pair(a, b cql2.Scalar, op string) (string, string, error) {
	_, aProp := a.(cql2.Property)
	_, bProp := b.(cql2.Property)
	if !aProp && !bProp {
		return "", "", domain.Invalid("invalid_filter", "filter", "filter: %s %s %s compares two literals; one side must be a property (queryables: %s)", describe(a), op, describe(b), t.names())
	}
	first, second := a, b
	if !aProp {
		first, second = b, a
	}
	fs, ft, err := t.scalar(first, "")
	if err != nil {
		return "", "", err
	}
	ss, st, err := t.scalar(second, ft)
	if err != nil {
		return "", "", err
	}
	if !compatible(ft, st) {
		return "", "", domain.Invalid("invalid_filter", "filter", "filter: %s is %s and %s is %s: compare values of one type (a date with DATE('YYYY-MM-DD'), an instant with TIMESTAMP('…'))", describe(first), ft, describe(second), st)
	}
	if !aProp {
		return ss, fs, nil
	}
	return fs, ss, nil
}

// compatible reports whether values of types a and b compare.
func compatible(a, b string) bool {
	num := func(s string) bool { return s == "number" || s == "integer" }
	return a == b || (num(a) && num(b))
}

// scalar translates an operand: a property into its column, a literal
// into a bind parameter. want is the type the other side has ("" when
// unknown); the result's type is the queryable's (date and date-time for
// the temporal ones) or the literal's.
func (t *translator) scalar(s cql2.Scalar, want string) (string, string, error) {
	switch v := s.(type) {
	case cql2.Property:
		q, ok := t.c.Queryable(v.Name)
		if !ok {
			return "", "", domain.Invalid("unknown_queryable", "filter", "filter, at character %d: %q is not a queryable of collection %s; its queryables are %s (GET /api/v1/ogc/collections/%s/queryables)", v.Pos, v.Name, t.c.ID, t.names(), t.c.ID)
		}
		return q.column, typeOf(q), nil
	case cql2.String:
		return t.bind(v.V, "text"), "string", nil
	case cql2.Number:
		return t.bind(v.V, "float8"), "number", nil
	case cql2.Bool:
		return t.bind(v.V, "boolean"), "boolean", nil
	case cql2.Date:
		if want == "date-time" {
			return t.bind(v.V, "timestamptz"), "date-time", nil
		}
		return t.bind(v.V.Format(time.DateOnly), "date"), "date", nil
	case cql2.Timestamp:
		return t.bind(v.V, "timestamptz"), "date-time", nil
	}
	return "", "", fmt.Errorf("cql2: an operand of type %T", s)
}

// typeOf is a queryable's type as the translator compares it.
func typeOf(q Queryable) string {
	if q.Format != "" {
		return q.Format
	}
	return q.Type
}

// bind appends v as a parameter of SQL type typ and returns its placeholder.
func (t *translator) bind(v any, typ string) string {
	t.args = append(t.args, v)
	return fmt.Sprintf("$%d::%s", len(t.args), typ)
}

func (t *translator) names() string {
	names := make([]string, len(t.c.Queryables))
	for i, q := range t.c.Queryables {
		names[i] = q.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func describe(s cql2.Scalar) string {
	switch v := s.(type) {
	case cql2.Property:
		return "property " + v.Name
	case cql2.String:
		return "'" + v.V + "'"
	case cql2.Number:
		return v.Text
	case cql2.Bool:
		return fmt.Sprint(v.V)
	case cql2.Date:
		return "DATE('" + v.V.Format(time.DateOnly) + "')"
	case cql2.Timestamp:
		return "TIMESTAMP('" + v.V.Format(time.RFC3339) + "')"
	}
	return "an operand"
}

// FilterSQL is filterSQL from no arguments: the condition e stands for
// over c's queryables and its bind parameters, numbered from $1.
func FilterSQL(c Collection, e cql2.Expr) (string, []any, error) { return filterSQL(c, e, nil) }
