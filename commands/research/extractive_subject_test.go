package research

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestQuestionSubject(t *testing.T) {
	tests := []struct {
		q     string
		marks []string
		kinds []string
	}{
		{"How fast does the Zorblax engine run?", []string{"zorblax"}, []string{"engin"}},
		{"What does the --amend option of git commit do?", []string{"--amend"}, []string{"option"}},
		{"What is the default value of gc.auto?", []string{"gc.auto"}, nil},
		{"What is the result of divmod(x, y)?", nil, nil},
		{"How long are answers cached?", nil, nil},
		{"What is git branch -D a shortcut for?", []string{"-D"}, []string{"branch"}},
		{"Which header carries the records API key?", []string{"api"}, []string{"key", "record"}},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			s := questionSubject(tc.q, nil)
			var kinds []string
			for k := range s.kinds {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			if !reflect.DeepEqual(s.marks, tc.marks) || !reflect.DeepEqual(kinds, tc.kinds) {
				t.Fatalf("marks %q kinds %q, want %q %q", s.marks, kinds, tc.marks, tc.kinds)
			}
		})
	}
}

// engines is the answer service's test page of two engines, in the
// order given, then after.
func engines(first, second, after string) []numbered {
	rpm := map[string]string{"Zorblax": "4200", "Quorvin": "3100"}
	text := "The " + first + " engine runs at " + rpm[first] + " rpm by default. The " + second + " engine runs at " + rpm[second] + " rpm by default. " + after
	return []numbered{source("Engines", [2]string{"p", strings.TrimSpace(text)})}
}

// TestSubjectPrecision: an answer about one engine states nothing about
// the other, however many words the other's sentence shares with the
// question; a pronoun's sentence goes with its antecedent's subject.
func TestSubjectPrecision(t *testing.T) {
	for _, tc := range []struct {
		name, q       string
		srcs          []numbered
		want, without []string
	}{
		{"the other engine's fact is left out", "How fast does the Zorblax engine run?", engines("Zorblax", "Quorvin", "It is cooled by air."),
			[]string{"The Zorblax engine runs at 4200 rpm by default [1]."}, []string{"Quorvin", "3100", "air"}},
		{"a pronoun whose antecedent is the other engine is left out", "How is the Zorblax engine cooled?", engines("Zorblax", "Quorvin", "It is cooled by air."),
			nil, []string{"Quorvin", "air"}},
		{"a pronoun whose antecedent is the subject is kept", "How is the Zorblax engine cooled?", engines("Quorvin", "Zorblax", "It is cooled by air."),
			[]string{"The Zorblax engine runs at 4200 rpm by default. It is cooled by air [1]."}, []string{"Quorvin", "3100"}},
		{"the other engine asked about", "How fast does the Quorvin engine run?", engines("Zorblax", "Quorvin", ""),
			[]string{"The Quorvin engine runs at 3100 rpm by default [1]."}, []string{"Zorblax", "4200"}},
		{"the fact asked for is not on the page: no answer", "What is the default timeout of the Zorblax engine?", engines("Zorblax", "Quorvin", "It is cooled by air."),
			nil, []string{"rpm", "air"}},
		{"the engine asked about is not on the page: no answer", "How fast does the Vextor engine run?", engines("Zorblax", "Quorvin", ""),
			nil, []string{"rpm", "air"}},
		{"a question naming no engine filters nothing", "How fast do the engines run by default?", engines("Zorblax", "Quorvin", ""),
			[]string{"4200", "3100"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := extractive(tc.q, tc.srcs, nil, nil)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("%q does not state %q", got, w)
				}
			}
			for _, w := range tc.without {
				if strings.Contains(got, w) {
					t.Fatalf("%q states %q, another subject's fact", got, w)
				}
			}
		})
	}
}

// TestOtherEntry: the entry of another term of a manual (another
// function, another setting) is left out unless the entry asked about
// refers to it or it is the parameter asked about.
func TestContainsOption(t *testing.T) {
	for _, tc := range []struct {
		s, opt string
		want   bool
	}{
		{"-D: Shortcut for --delete --force.", "-D", true},
		{"Shortcut for --delete --force.", "-d", false},
		{"Use -d to delete.", "-D", false},
		{"git commit --amend --no-edit", "--amend", true},
		{"git commit --amend-all", "--amend", false},
	} {
		if got := containsOption(tc.s, tc.opt); got != tc.want {
			t.Errorf("containsOption(%q, %q) = %v", tc.s, tc.opt, got)
		}
	}
}

func TestOtherEntry(t *testing.T) {
	dumps := source("json", [2]string{"tp", "json.dumps(obj, *, indent=None)\nSerialize obj to a JSON formatted str. The arguments have the same meaning as in dump()."},
		[2]string{"tp", "json.dump(obj, fp, *, indent=None)\nIf indent is a non-negative integer, JSON array elements are pretty-printed. None (the default) selects the most compact representation."},
		[2]string{"tp", "plistlib.dumps(value)\nThe indent of plist files is not configurable; None (the default) uses tabs."})
	got, _ := extractive("What is the default indent of json.dumps?", []numbered{dumps}, nil, nil)
	if !strings.Contains(got, "most compact") || strings.Contains(got, "plist") {
		t.Fatalf("json.dumps refers to dump(), not to plistlib.dumps(): %q", got)
	}
}
