package main

import "github.com/arr-dev/arr/domain/text"

// shown is s as the CLI prints it in a human format (a table, a line, an
// error): text from the database or from a definition's error is an
// analyst's to write, so its control characters (ESC, BEL, CR, …, which a
// terminal would act on) are escaped. Every human format prints such text
// through it; JSON escapes them itself.
func shown(s string) string { return text.Escape(s) }
