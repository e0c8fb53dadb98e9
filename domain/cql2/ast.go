package cql2

import "time"

// Expr is a boolean expression: And, Or, Not, Compare, Like, Between, In,
// IsNull or Bool.
type Expr interface{ isExpr() }

// Scalar is an operand of a predicate: Property, String, Number, Bool,
// Date or Timestamp.
type Scalar interface{ isScalar() }

// And holds when every one of Args holds (two or more).
type And struct{ Args []Expr }

// Or holds when any of Args holds (two or more).
type Or struct{ Args []Expr }

// Not holds when Arg does not.
type Not struct{ Arg Expr }

// Compare is Left Op Right; Op is one of =, <>, <, <=, >, >=.
type Compare struct {
	Op          string
	Left, Right Scalar
}

// Like is Value [NOT] LIKE Pattern: Pattern is a String whose % matches any
// characters, _ one character, and \ escapes the next one.
type Like struct {
	Value   Scalar
	Pattern String
	Negated bool
}

// Between is Value [NOT] BETWEEN Low AND High (both ends included).
type Between struct {
	Value, Low, High Scalar
	Negated          bool
}

// In is Value [NOT] IN (List...).
type In struct {
	Value   Scalar
	List    []Scalar
	Negated bool
}

// IsNull is Value IS [NOT] NULL.
type IsNull struct {
	Value   Scalar
	Negated bool
}

// Property is a property named in the filter, as written (a double-quoted
// name unquoted); Pos is its 1-based character position.
type Property struct {
	Name string
	Pos  int
}

// String is a character string literal ('…', ” for a quote).
type String struct{ V string }

// Number is a numeric literal; Text is how it was written.
type Number struct {
	V    float64
	Text string
}

// Bool is TRUE or FALSE: a predicate alone, or a boolean operand.
type Bool struct{ V bool }

// Date is DATE('YYYY-MM-DD'), at midnight UTC.
type Date struct{ V time.Time }

// Timestamp is TIMESTAMP('…'), an RFC 3339 instant in UTC.
type Timestamp struct{ V time.Time }

func (And) isExpr()     {}
func (Or) isExpr()      {}
func (Not) isExpr()     {}
func (Compare) isExpr() {}
func (Like) isExpr()    {}
func (Between) isExpr() {}
func (In) isExpr()      {}
func (IsNull) isExpr()  {}
func (Bool) isExpr()    {}

func (Property) isScalar()  {}
func (String) isScalar()    {}
func (Number) isScalar()    {}
func (Bool) isScalar()      {}
func (Date) isScalar()      {}
func (Timestamp) isScalar() {}
