// Package answerusage is the answer service's answers per key and UTC day
// (AnswerServed events) and the query behind the account page's table.
package answerusage
