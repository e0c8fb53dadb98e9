package research_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

func passage(doc, title string, heading []string, text string) answer.IndexedPassage {
	return answer.IndexedPassage{Passage: answer.Passage{ID: doc + ":0", DocID: doc, Heading: heading, Text: text}, Title: title, URL: "http://127.0.0.1/" + doc}
}

func TestIndexRanksPassages(t *testing.T) {
	ps := []answer.IndexedPassage{
		passage("defaults", "Configuration Defaults", []string{"Defaults"}, "This page lists defaults of many settings."),
		passage("buffer", "Resource Consumption", []string{"Memory"}, "shared_buffers (integer) Sets the amount of memory the database server uses for shared memory buffers. The default is typically 128 megabytes."),
		passage("phrase", "Misc", nil, "The shared pool is not the memory of buffers."),
		passage("other", "Logging", nil, "log_min_messages controls which message levels are written to the server log."),
	}
	x := research.BuildIndex(ps, 7, research.DefaultWeights)
	got := x.Search("What is the default value of shared_buffers?", 10)
	if len(got) == 0 || got[0].DocID != "buffer" {
		t.Fatalf("best passage %+v, want the one that describes shared_buffers", got)
	}
	for _, s := range got {
		if s.DocID == "other" {
			t.Fatalf("a passage sharing no term was returned: %+v", s)
		}
	}
	if x.Generation != 7 || x.Len() != 4 {
		t.Fatalf("generation %d, %d passages", x.Generation, x.Len())
	}
	// Terms next to each other in order outrank the same terms apart.
	y := research.BuildIndex([]answer.IndexedPassage{
		passage("apart", "", nil, "Buffers are shared by workers; memory is limited."),
		passage("phrase", "", nil, "Memory workers limited; shared buffers are tuned."),
	}, 0, research.DefaultWeights)
	if got := y.Search("shared buffers", 2); len(got) != 2 || got[0].DocID != "phrase" {
		t.Fatalf("phrase boost: %+v", got)
	}
}

func TestTerms(t *testing.T) {
	got := strings.Join(research.Terms("How do I set json.dumps indent, sys.setrecursionlimit and shared_buffers?"), " ")
	for _, want := range []string{"json", "dump", "indent", "sys", "setrecursionlimit", "shared_buffers", "share", "buffer"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Fatalf("Terms = %q, want %q among them", got, want)
		}
	}
	if strings.Contains(" "+got+" ", " how ") || strings.Contains(" "+got+" ", " do ") {
		t.Fatalf("stop words kept: %q", got)
	}
}

func TestDottedNameTerms(t *testing.T) {
	got := " " + strings.Join(research.Terms("gc.autoDetach and gc.auto; see json.dumps() and os.path.join. Version 3.11 is out."), " ") + " "
	for _, want := range []string{" gc.autodetach ", " gc.auto ", " json.dumps ", " os.path.join ", " gc ", " auto ", " detach ", " json ", " dump "} {
		if !strings.Contains(got, want) {
			t.Fatalf("Terms = %q, want %q among them", got, want)
		}
	}
	if strings.Contains(got, "3.11") || strings.Contains(got, " out. ") {
		t.Fatalf("a version or a sentence's end became a dotted term: %q", got)
	}
	// "gc.auto" whole is a term gc.autoDetach does not hold: a question
	// about gc.auto finds its own entry first.
	if strings.Contains(" "+strings.Join(research.Terms("gc.autoDetach"), " ")+" ", " gc.auto ") {
		t.Fatal("gc.autoDetach holds the term gc.auto")
	}
}

func TestSymbolTerms(t *testing.T) {
	got := " " + strings.Join(research.Terms("What does x // y compute, and what does '^' or %j mean? See http://a/b and s * n."), " ") + " "
	for _, want := range []string{" // ", " ^ ", " %j ", " * "} {
		if !strings.Contains(got, want) {
			t.Fatalf("Terms = %q, want %q among them", got, want)
		}
	}
	if strings.Contains(got, " / ") {
		t.Fatalf("a URL's slash became a term: %q", got)
	}
}
