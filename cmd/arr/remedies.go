package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// A remedy is the command that makes what a failed command found missing,
// written out with the failed command's own flag values, so the user can
// run it as it stands. The CLI prints it on the line after the error
// (reportError); the HTTP services, whose callers have no CLI, share the
// error but not the remedy.
type remedy func(r remedyContext) string

// remedyContext is what a remedy is written from: the failed command and
// how the user invoked arr.
type remedyContext struct {
	cmd  *cobra.Command
	self string
}

// flag is the value of the failed command's flag name as given, or
// placeholder when it was not given.
func (r remedyContext) flag(name, placeholder string) string {
	if r.cmd == nil {
		return placeholder
	}
	f := r.cmd.Flags().Lookup(name)
	if f == nil || !f.Changed || f.Value.String() == "" {
		return placeholder
	}
	return shellWord(f.Value.String())
}

// is reports whether the failed command is path under the root ("keys
// mint").
func (r remedyContext) is(path string) bool {
	return r.cmd != nil && strings.TrimPrefix(r.cmd.CommandPath(), r.cmd.Root().Name()+" ") == path
}

// remedies maps each not-found code the CLI can meet to its remedy. A code
// that names a missing thing and is missing here is a test failure
// (TestEveryMissingThingHasARemedy), unless withoutRemedy says why it has
// none.
func remedies() map[string]remedy {
	return map[string]remedy{
		"account_not_found": func(r remedyContext) string {
			email := r.flag("email", "E")
			s := "create the account with: " + r.self + " accounts create --email " + email
			if r.is("keys mint") {
				s += "\n  or mint with --create-account, which creates it on the free plan"
			}
			return s
		},
		"key_not_found": func(r remedyContext) string {
			return "list an account's keys with: " + r.self + " keys list --email E\n  mint one with: " +
				r.self + " keys mint --email E --service answer|gateway|records"
		},
		"list_not_found": func(r remedyContext) string {
			return "import a list with: " + r.self + " import list --email " + r.flag("email", "E") + " FILE (it prints the list's id)"
		},
		"monitor_not_found": func(r remedyContext) string {
			email := r.flag("email", "E")
			return "list the account's monitors with: " + r.self + " monitors list --email " + email +
				"\n  make one with: " + r.self + " monitors create --email " + email + " --list LIST_ID --url URL"
		},
		"projection_not_found": func(r remedyContext) string {
			return "list the projections with: " + r.self + " projections status\n  define a SQL projection with: " +
				r.self + " projections create FILE (docs/sql-projections.md)"
		},
		"no_signed_head": func(r remedyContext) string {
			return "sign one now with: " + r.self + " events checkpoint"
		},
	}
}

// withoutRemedy are the not-found codes with no command to make the thing,
// each with the reason: only the HTTP services meet them (what their
// callers name by URL or hold in a cookie), or what is missing is
// nothing to fix.
func withoutRemedy() map[string]string {
	const http = "only the HTTP services answer it"
	return map[string]string{
		"audit_entry_not_found": http, "collection_not_found": http, "feature_not_found": http, "document_not_found": http, "lead_not_found": http, "lead_unmatched": http,
		"parcel_not_found": http, "research_job_not_found": http, "route_not_found": http, "session_not_found": http,
		"no_foreign_heads": "arr events disown-heads found nothing to disown: the log is as it should be",
	}
}

// selfName is how the user invoked arr, as a command they can type again:
// the path they ran (./bin/arr) when it has a directory, else arr.
func selfName() string {
	if len(os.Args) == 0 || !strings.Contains(os.Args[0], string(filepath.Separator)) {
		return "arr"
	}
	return shellWord(os.Args[0])
}

// shellWord is s quoted for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
