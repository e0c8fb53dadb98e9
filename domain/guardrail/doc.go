// Package guardrail holds the gateway's guardrails as pure rules: the PII
// detectors (e-mail, phone, credit card with Luhn, US SSN, IBAN with its
// mod-97 check, IPv4 and IPv6 addresses), deny patterns (RE2), a prompt
// size cap, the webhook guardrail's settings, and a Policy that says for
// each rule whether a match is redacted (replaced by a typed placeholder
// such as [EMAIL]), refused or only logged, and whether it scans the
// prompt, the output or both.
//
// A Policy is data (it travels in the GuardrailsSet event, never with any
// prompt text); Compile checks it and compiles its patterns once into an
// Engine, which scans text (Engine.Apply) and streamed text in a bounded
// window (Engine.Stream). What fired is reported as rule names and
// actions (Fired), never as the text matched.
//
// It imports the standard library only.
package guardrail
