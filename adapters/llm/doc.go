// Package llm is a client of OpenAI-compatible chat-completion endpoints
// (POST {base}/chat/completions): arr's own gateway by default, any other
// compatible server when configured. It speaks the OpenAI wire format and
// reads the gateway's routing extension for cost when present. Failures
// wrap domain.ErrUnavailable. A Client is safe for concurrent use.
package llm
