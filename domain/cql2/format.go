package cql2

import (
	"strings"
	"time"
)

// Format writes e back as CQL2 text, fully parenthesized: Parse(Format(e))
// is e again.
func Format(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

func writeExpr(b *strings.Builder, e Expr) {
	switch v := e.(type) {
	case And:
		writeList(b, v.Args, " AND ")
	case Or:
		writeList(b, v.Args, " OR ")
	case Not:
		b.WriteString("NOT (")
		writeExpr(b, v.Arg)
		b.WriteString(")")
	case Compare:
		writeScalar(b, v.Left)
		b.WriteString(" " + v.Op + " ")
		writeScalar(b, v.Right)
	case Like:
		writeScalar(b, v.Value)
		b.WriteString(neg(v.Negated) + " LIKE ")
		writeScalar(b, v.Pattern)
	case Between:
		writeScalar(b, v.Value)
		b.WriteString(neg(v.Negated) + " BETWEEN ")
		writeScalar(b, v.Low)
		b.WriteString(" AND ")
		writeScalar(b, v.High)
	case In:
		writeScalar(b, v.Value)
		b.WriteString(neg(v.Negated) + " IN (")
		for i, s := range v.List {
			if i > 0 {
				b.WriteString(", ")
			}
			writeScalar(b, s)
		}
		b.WriteString(")")
	case IsNull:
		writeScalar(b, v.Value)
		if v.Negated {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case Bool:
		writeScalar(b, v)
	}
}

func writeList(b *strings.Builder, args []Expr, sep string) {
	for i, a := range args {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString("(")
		writeExpr(b, a)
		b.WriteString(")")
	}
}

func neg(n bool) string {
	if n {
		return " NOT"
	}
	return ""
}

func writeScalar(b *strings.Builder, s Scalar) {
	switch v := s.(type) {
	case Property:
		b.WriteString(`"` + strings.ReplaceAll(v.Name, `"`, `""`) + `"`)
	case String:
		b.WriteString("'" + strings.ReplaceAll(v.V, "'", "''") + "'")
	case Number:
		b.WriteString(v.Text)
	case Bool:
		if v.V {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case Date:
		b.WriteString("DATE('" + v.V.Format(time.DateOnly) + "')")
	case Timestamp:
		b.WriteString("TIMESTAMP('" + v.V.Format(time.RFC3339Nano) + "')")
	}
}
