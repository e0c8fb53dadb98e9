package text_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		field, s string
		max      int
		wantCode string
	}{
		{"plain text passes", "name", "my key", 100, ""},
		{"tab and newline pass", "notes", "a\tb\nc", 100, ""},
		{"non-ASCII letters pass", "q", "was ist Müßiggang – 意味?", 100, ""},
		{"at the cap passes", "name", strings.Repeat("é", 5), 5, ""},
		{"NUL is refused", "name", "bad\x00name", 100, "name_control_character"},
		{"carriage return is refused", "name", "a\rb", 100, "name_control_character"},
		{"escape is refused", "q", "a\x1b[31m", 100, "q_control_character"},
		{"DEL is refused", "q", "a\x7f", 100, "q_control_character"},
		{"C1 control is refused", "q", "a\u0085b", 100, "q_control_character"},
		{"invalid UTF-8 is refused", "notes", "a\xffb", 100, "notes_invalid_utf8"},
		{"truncated UTF-8 is refused", "notes", "a\xc3", 100, "notes_invalid_utf8"},
		{"over the cap is refused", "name", "abcdef", 5, "name_too_long"},
		{"the code uses the field's base name", "columns[3]", "x\x00", 0, "columns_control_character"},
		{"nested field", "rows[2].address", "x\x00", 0, "rows_control_character"},
		{"no cap", "q", strings.Repeat("a", 10000), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := text.Check(tc.field, tc.s, tc.max)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("Check = %v, want a validation error", err)
			}
			if de.Code != tc.wantCode || de.Field != tc.field {
				t.Fatalf("code, field = %q, %q; want %q, %q", de.Code, de.Field, tc.wantCode, tc.field)
			}
			if !strings.Contains(de.Message, tc.field) {
				t.Fatalf("message %q does not name the field", de.Message)
			}
		})
	}
}

func TestCheckAll(t *testing.T) {
	err := text.CheckAll("columns", []string{"apn", "ok", "bad\x00"}, 100)
	var de *domain.Error
	if !errors.As(err, &de) || de.Field != "columns[2]" || de.Code != "columns_control_character" {
		t.Fatalf("CheckAll = %v, want columns[2] named", err)
	}
	if err := text.CheckAll("columns", []string{"a", "b"}, 100); err != nil {
		t.Fatalf("CheckAll of good values = %v", err)
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"fitting text is unchanged", "a\tb\nc", "a\tb\nc"},
		{"NUL is dropped", "a\x00b", "ab"},
		{"CRLF becomes a newline", "a\r\nb", "a\nb"},
		{"a lone CR becomes a newline", "a\rb", "a\nb"},
		{"form feed becomes a space", "a\fb", "a b"},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "a\uFFFDb"},
		{"C1 control is dropped", "a\u0085b", "ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text.Clean(tc.in)
			if got != tc.want {
				t.Fatalf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !text.Valid(got) {
				t.Fatalf("Clean(%q) = %q does not pass the rule", tc.in, got)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "abc", "a\x00b", "a\r\n", "\xff\xfe", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := text.Clean(s)
		if !text.Valid(c) {
			t.Fatalf("Clean(%q) = %q does not pass the rule", s, c)
		}
		if text.Valid(s) && c != s {
			t.Fatalf("Clean changed valid text %q to %q", s, c)
		}
		if err := text.Check("f", c, 0); err != nil {
			t.Fatalf("Check(Clean(%q)) = %v", s, err)
		}
	})
}
