package answer_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

func TestDeltas(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"one sentence", "Tides rise twice a day [1].", []string{"Tides rise twice a day [1]."}},
		{"cited sentences", "Spring tides follow the full moon [1]. Neap tides come between [2]. 3 times a year [1].",
			[]string{"Spring tides follow the full moon [1]. ", "Neap tides come between [2]. ", "3 times a year [1]."}},
		{"a marker ends a sentence with no full stop", "The sun pulls too [1] The moon pulls more [2].",
			[]string{"The sun pulls too [1] ", "The moon pulls more [2]."}},
		{"an abbreviation before lower case is not an end", "It was e.g. small. Then big!",
			[]string{"It was e.g. small. ", "Then big!"}},
		{"no end at all", "no end here", []string{"no end here"}},
		{"non-ASCII", "Élan vital [1]. Über alles? Ja.", []string{"Élan vital [1]. ", "Über alles? ", "Ja."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := answer.Deltas(tc.text)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("Deltas(%q) = %q, want %q", tc.text, got, tc.want)
			}
			if strings.Join(got, "") != tc.text {
				t.Fatalf("the pieces do not join to the text: %q", got)
			}
		})
	}
}
