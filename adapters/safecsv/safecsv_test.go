package safecsv

import "testing"

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"2041 W NORTH AVE", "2041 W NORTH AVE"},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+1", "'+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"  =1", "'  =1"},
		{"\u00a0=1", "'\u00a0=1"},
		{"\u200b=1", "'\u200b=1"},
		{"\u3000=1", "'\u3000=1"},
		{"\uff1d1", "'\uff1d1"}, // full-width =
		{"a=1", "a=1"},
		{"line 7: bad zip", "line 7: bad zip"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Row([]string{"=a", "b"}); got[0] != "'=a" || got[1] != "b" {
		t.Errorf("Row = %q", got)
	}
}
