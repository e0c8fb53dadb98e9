package guardrail

import (
	"strings"
	"testing"
)

// Attack tests (a reviewer who did not write the guardrails): each one
// fails now and names what gets past them.

// streamAll runs text through a stream filter in pieces of n bytes and
// returns what it sent.
func streamAll(e *Engine, text string, n int) string {
	f := e.Stream(0)
	var out strings.Builder
	for i := 0; i < len(text); i += n {
		s, _ := f.Write(text[i:min(i+n, len(text))])
		out.WriteString(s)
	}
	s, _ := f.Flush()
	out.WriteString(s)
	return out.String()
}

// TestAttackCardNextToOtherDigits: the card candidate pattern is greedy
// (up to 19 digits across single spaces or dashes) and a candidate that
// fails the Luhn check is dropped whole, never retried shorter or later,
// so a real card number next to any other digit group is not seen: the
// expiry date written after it, a quantity before it, a second card.
func TestAttackCardNextToOtherDigits(t *testing.T) {
	e := engine(t, Policy{PII: []PIIRule{{Type: CreditCard, Action: Refuse}}})
	for _, text := range []string{
		"pay with 4111 1111 1111 1111 12/28 cvc 123",
		"order 12 4111 1111 1111 1111 please",
		"card 4111-1111-1111-1111-7 (the 7 is a note)",
	} {
		if r := e.Apply(text, Prompt); r.Refused == nil {
			t.Errorf("%q: a Luhn-valid card number got past a refusing rule (sent as %q)", text, r.Text)
		}
	}
}

// TestAttackUnicodeLookalikes: the detectors and deny patterns see the
// bytes as they came, with ASCII \d and \b and no normalization, so what
// a model reads as the same number or word passes: full-width digits,
// no-break spaces or zero-width spaces as separators, a full-width @, a
// zero-width space inside a denied word, combining marks on digits.
func TestAttackUnicodeLookalikes(t *testing.T) {
	e := engine(t, Policy{PII: []PIIRule{{Type: CreditCard, Action: Refuse}, {Type: Email, Action: Refuse}, {Type: SSN, Action: Refuse}},
		Deny: []DenyRule{{Pattern: `(?i)project zeus`}}})
	for name, text := range map[string]string{
		"full-width digits":      "card \uff14\uff11\uff11\uff11 \uff11\uff11\uff11\uff11 \uff11\uff11\uff11\uff11 \uff11\uff11\uff11\uff11",
		"no-break spaces":        "card 4111\u00a01111\u00a01111\u00a01111",
		"zero-width spaces":      "card 4111\u200b1111\u200b1111\u200b1111",
		"zero-width joiners":     "ssn 123\u200d-45-6789",
		"full-width at sign":     "mail jane.doe\uff20corp.io",
		"zero-width in a word":   "tell me about project ze\u200bus",
		"combining marks":        "card 4\u03321\u03321\u03321\u0332 1111 1111 1111",
		"full-width letters":     "tell me about \uff50\uff52\uff4f\uff4a\uff45\uff43\uff54 zeus",
		"no-break space in deny": "tell me about project\u00a0zeus",
	} {
		if r := e.Apply(text, Prompt); r.Refused == nil {
			t.Errorf("%s: %q got past a refusing rule", name, text)
		}
	}
}

// TestAttackRedactPastMaxMatches: a deny rule keeps at most maxMatches
// matches per scan, "the spans beyond left to the next scan"; a prompt
// has no next scan, so 10000 decoys before the secret send the secret
// upstream unredacted.
func TestAttackRedactPastMaxMatches(t *testing.T) {
	e := engine(t, Policy{Deny: []DenyRule{{Pattern: `zeus-\w+`, Action: Redact}}})
	text := strings.Repeat("zeus-x ", maxMatches) + "zeus-launchcodes"
	if r := e.Apply(text, Prompt); strings.Contains(r.Text, "launchcodes") {
		t.Fatalf("the %dth match of a redacting deny rule went through unredacted: ...%q", maxMatches+1, r.Text[len(r.Text)-40:])
	}
}

// TestAttackStreamCutBeforeCard: the stream filter scans what it holds as
// a text of its own, so once the cut falls inside a digit group the
// held text starts with a new "word boundary"; a card right after an SSN
// that the whole reply's scan redacts is then streamed in clear (5-byte
// chunks, as a tokenizer may send).
func TestAttackStreamCutBeforeCard(t *testing.T) {
	e := engine(t, Policy{PII: []PIIRule{{Type: CreditCard, Action: Redact, On: OnOutput}}})
	text := "123-45-6789 4111111111111111 " + strings.Repeat("y", 300)
	if whole := e.Apply(text, Output).Text; strings.Contains(whole, "4111111111111111") {
		t.Fatalf("the whole reply's scan missed the card: %q", whole[:40])
	}
	if got := streamAll(e, text, 5); strings.Contains(got, "4111111111111111") {
		t.Fatalf("streamed in 5-byte chunks the card went out in clear: %q", got[:40])
	}
}

// TestAttackPhoneFalsePositives: the phone detector takes any three
// groups of 2-4, 3-4 and 3-4 digits with 8 to 15 digits in all, so
// amounts written with thin groups and version-like numbers are phone
// numbers: a refusing phone rule refuses a budget.
func TestAttackPhoneFalsePositives(t *testing.T) {
	e := engine(t, Policy{PII: []PIIRule{{Type: Phone, Action: Refuse}}})
	for _, text := range []string{
		"the budget is 150 000 000 dollars",
		"build 2024.1105.1200 is the release",
	} {
		if r := e.Apply(text, Prompt); r.Refused != nil {
			t.Errorf("%q refused as a phone number", text)
		}
	}
}
