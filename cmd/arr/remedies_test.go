package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryMissingThingHasARemedy: every not-found code in arr's code has
// a remedy the CLI prints, or a reason in withoutRemedy why it has none.
func TestEveryMissingThingHasARemedy(t *testing.T) {
	re := regexp.MustCompile(`NotFound\("([a-z_]+)"`)
	var codes []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == ".arr") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(codes, m[1]) {
				codes = append(codes, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d not-found codes: %v", len(codes), codes)
	}
	fixes, none := remedies(), withoutRemedy()
	for _, c := range codes {
		_, fix := fixes[c]
		_, why := none[c]
		if fix == why {
			t.Errorf("not-found code %s: give it a remedy (the command that makes the thing) or say in withoutRemedy why it has none", c)
		}
	}
}

// TestRemedyUsesTheUsersValues: a remedy names the command with the
// failed command's own flag values, quoted for a shell when they need it.
func TestRemedyUsesTheUsersValues(t *testing.T) {
	root := &cobra.Command{Use: "arr"}
	keys := &cobra.Command{Use: "keys"}
	mint := &cobra.Command{Use: "mint", Run: func(*cobra.Command, []string) {}}
	mint.Flags().String("email", "", "")
	keys.AddCommand(mint)
	root.AddCommand(keys)
	if err := mint.Flags().Set("email", "o'neil@example.com"); err != nil {
		t.Fatal(err)
	}
	got := remedies()["account_not_found"](remedyContext{cmd: mint, self: "./bin/arr"})
	want := `create the account with: ./bin/arr accounts create --email 'o'\''neil@example.com'`
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "--create-account") {
		t.Fatalf("remedy %q, want it to start %q and offer --create-account", got, want)
	}
	if got := remedies()["account_not_found"](remedyContext{self: "arr"}); !strings.HasPrefix(got, "create the account with: arr accounts create --email E") || strings.Contains(got, "--create-account") {
		t.Fatalf("remedy without a command: %q", got)
	}
}
