package tracing

// GenAIProvider is the gen_ai.provider.name of a catalog vendor: the
// OpenTelemetry GenAI semantic conventions' well-known name where the
// vendor has one ("google" is "gcp.gemini"), else the vendor as the
// catalog names it.
func GenAIProvider(vendor string) string {
	switch vendor {
	case "google", "gemini":
		return "gcp.gemini"
	case "mistral":
		return "mistral_ai"
	case "xai":
		return "x_ai"
	case "bedrock":
		return "aws.bedrock"
	}
	return vendor
}
