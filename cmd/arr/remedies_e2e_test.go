package main_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestMissingThingsNameTheCommandThatMakesThem: a CLI command that finds
// something missing says, on the next line, the command that makes it,
// with the user's own values; run as printed, that command works.
func TestMissingThingsNameTheCommandThatMakesThem(t *testing.T) {
	e := newEnv(t)
	const email = "newcomer@example.com"
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"keys", "mint", "--email", email, "--service", "answer"},
			[]string{"404 account_not_found", "create the account with: " + binary + " accounts create --email " + email, "--create-account"}},
		{[]string{"accounts", "show", "--email", email}, []string{"404 account_not_found", binary + " accounts create --email " + email}},
		{[]string{"keys", "list", "--email", email}, []string{binary + " accounts create --email " + email}},
		{[]string{"monitors", "list", "--email", email}, []string{binary + " accounts create --email " + email}},
		{[]string{"keys", "revoke", "--id", uuid.NewString()}, []string{"404 key_not_found", binary + " keys list --email E", binary + " keys mint --email E"}},
		{[]string{"projections", "rebuild", "nosuch"}, []string{`no projection named "nosuch"`, "404 projection_not_found", binary + " projections status", binary + " projections create FILE"}},
		{[]string{"projections", "drop", "nosuch"}, []string{"404 projection_not_found", binary + " projections create FILE"}},
		{[]string{"import", "list", "--email", email, t.TempDir() + "/none.csv"}, []string{"none.csv: no such file or directory"}},
	}
	for _, c := range cases {
		out, errs, code := e.arr(c.args...)
		if code != 2 || out != "" {
			t.Errorf("arr %s: exit %d (want 2, a request to fix), stdout %q", strings.Join(c.args, " "), code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("arr %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), w, errs)
			}
		}
	}
	// The command named, as printed, makes the account; the mint then works.
	_, errs, _ := e.arr("keys", "mint", "--email", email, "--service", "answer")
	line := errs[strings.Index(errs, binary+" accounts create"):]
	line = line[:strings.IndexByte(line, '\n')]
	args := strings.Fields(strings.TrimPrefix(line, binary+" "))
	if out, errs, code := e.arr(args...); code != 0 {
		t.Fatalf("the remedy %q: exit %d %s %s", line, code, out, errs)
	}
	out, errs, code := e.arr("keys", "mint", "--email", email, "--service", "answer")
	if code != 0 || !strings.HasPrefix(out, "arr_ans_") || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "shown once") {
		t.Fatalf("mint after the remedy: exit %d, stdout %q (want the secret alone), stderr %q", code, out, errs)
	}

	// --create-account makes the account and the key in one step, and
	// says so on stderr; the secret alone is on stdout.
	out, errs, code = e.arr("keys", "mint", "--email", "second@example.com", "--service", "gateway", "--create-account")
	if code != 0 || !strings.HasPrefix(out, "arr_gw_") || strings.Count(out, "\n") != 1 ||
		!strings.Contains(errs, "created for second@example.com on the free plan") {
		t.Fatalf("mint --create-account: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	secret := strings.TrimSpace(out)
	var keys []struct {
		Prefix string `json:"prefix"`
		Hint   string `json:"hint"`
	}
	e.mustArr(&keys, "keys", "list", "--email", "second@example.com", "--json")
	if len(keys) != 1 || !strings.HasPrefix(secret, keys[0].Prefix) || !strings.HasSuffix(secret, keys[0].Hint) {
		t.Fatalf("the account made by --create-account holds %+v, not the key printed", keys)
	}
	// An account that exists is used as it is.
	out, errs, code = e.arr("keys", "mint", "--email", "second@example.com", "--service", "records", "--create-account", "--json")
	if code != 0 || strings.Contains(out, "account_created") || strings.Contains(errs, "created for") {
		t.Fatalf("mint --create-account for an existing account: exit %d, %s %s", code, out, errs)
	}
}
