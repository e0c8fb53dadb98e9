package routing

// Reservation arithmetic: before a request is sent upstream, a key's
// budget and token rate reserve the most it can cost and use; the real
// cost and tokens are settled once it ends. The bounds are upper bounds
// whatever the upstream answers within its own limits, so a key can
// never spend past its budget by a request it was admitted for.

// ImageTokenBound bounds the prompt tokens of one image part (OpenAI's
// high-detail images and Anthropic's largest cost well under it).
const ImageTokenBound = 2500

// PromptBound is an upper bound of a request's prompt tokens: every token
// of a byte-level tokenizer covers at least one byte of text, and a
// request's JSON body holds every byte of its text plus the message
// framing the tokenizer adds its few tokens for; each image part adds
// ImageTokenBound.
func PromptBound(bodyBytes, images int) int64 {
	return int64(bodyBytes) + int64(images)*ImageTokenBound
}

// MaxOutput is the most output tokens candidate c can produce for a
// request capped at reqMax output tokens (0: no cap) with prompt tokens
// of input: the candidate's own cap, else the request's, else what the
// model's context window leaves after the prompt (at least one token,
// when the prompt alone fills it).
func MaxOutput(c Candidate, reqMax, prompt int64) int64 {
	n := c.Model.ContextWindow - prompt
	if c.MaxTokens > 0 && c.MaxTokens < n {
		n = c.MaxTokens
	}
	if reqMax > 0 && reqMax < n {
		n = reqMax
	}
	return max(n, 1)
}

// Reservation is what a request reserves before its upstream call: the
// highest cost and the highest token count (prompt plus output) of any
// candidate it may fail over to. The cost prices every prompt token at
// the candidate's dearest input price (Model.MaxCost), so it bounds the
// cost whatever part of the prompt the upstream reads from or writes to
// its prompt cache.
func Reservation(cands []Candidate, reqMax, prompt int64) (cost MicroUSD, tokens int64) {
	for _, c := range cands {
		out := MaxOutput(c, reqMax, prompt)
		cost = max(cost, c.Model.MaxCost(prompt, out))
		tokens = max(tokens, prompt+out)
	}
	return cost, tokens
}
