package routing

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// The upstream APIs a catalog model may name in "api": the wire format
// and authentication the gateway speaks to it.
const (
	// APIOpenAI is an OpenAI-compatible chat-completions endpoint (the
	// default).
	APIOpenAI = "openai"
	// APIAnthropic is Anthropic's Messages API.
	APIAnthropic = "anthropic"
	// APIAzureOpenAI is an Azure OpenAI deployment (api_version and
	// deployment).
	APIAzureOpenAI = "azure_openai"
	// APIGemini is Google's Gemini API (generateContent, api_key_env's
	// key as x-goog-api-key).
	APIGemini = "gemini"
	// APIBedrock is AWS Bedrock's Converse API in region (or AWS_REGION),
	// signed with the standard AWS credential chain's credentials.
	APIBedrock = "bedrock"
	// APIVertex is Vertex AI in project and location: Gemini models, and
	// Claude (vendor anthropic) through Anthropic's Messages API, with
	// OAuth2 tokens of the service account credentials_env names.
	APIVertex = "vertex"
)

// apis are the APIs a catalog may name, each with whether this build has
// its adapter.
var apis = []struct {
	name      string
	supported bool
}{
	{APIOpenAI, true}, {APIAnthropic, true}, {APIGemini, true},
	{APIBedrock, true}, {APIAzureOpenAI, true}, {APIVertex, true},
}

// SupportedAPIs are the APIs this build's catalog accepts.
func SupportedAPIs() []string {
	var out []string
	for _, a := range apis {
		if a.supported {
			out = append(out, a.name)
		}
	}
	return out
}

// checkAPI reads a model's "api" and the fields that belong to an API:
// "" is openai; an API whose adapter this build lacks is refused, as is a
// field set for an API that does not use it.
func (fm fileModel) checkAPI() (string, error) {
	api := fm.API
	if api == "" {
		api = APIOpenAI
	}
	known := false
	for _, a := range apis {
		if a.name != api {
			continue
		}
		known = true
		if !a.supported {
			return "", fmt.Errorf("api %q is not supported yet by this build (its adapter is not in it); use one of %s", api, strings.Join(SupportedAPIs(), ", "))
		}
	}
	if !known {
		names := make([]string, len(apis))
		for i, a := range apis {
			names[i] = a.name
		}
		return "", fmt.Errorf("api must be one of %s; got %q", strings.Join(names, ", "), api)
	}
	for _, f := range []struct {
		name, v string
		for_    []string
	}{
		{"api_version", fm.APIVersion, []string{APIAzureOpenAI}},
		{"deployment", fm.Deployment, []string{APIAzureOpenAI}},
		{"region", fm.Region, []string{APIBedrock}},
		{"project", fm.Project, []string{APIVertex}},
		{"location", fm.Location, []string{APIVertex}},
		{"credentials_env", fm.CredentialsEnv, []string{APIAzureOpenAI, APIVertex}},
	} {
		if f.v != "" && !slices.Contains(f.for_, api) {
			return "", fmt.Errorf("%s is a setting of %s models, not of api %s", f.name, strings.Join(f.for_, " and "), api)
		}
		if strings.TrimSpace(f.v) != f.v || strings.ContainsAny(f.v, "/?#&") && f.name != "credentials_env" {
			return "", fmt.Errorf("%s %q must be a single name (no spaces, /, ?, # or &)", f.name, f.v)
		}
	}
	if api == APIAzureOpenAI && fm.APIVersion == "" {
		return "", fmt.Errorf("api_version is required for azure_openai models (like 2024-10-21)")
	}
	return api, fm.checkCloud(api)
}

// The names a cloud's settings must have: they go into a host name or a
// URL path, and an operator's typo is better refused at start than sent.
var (
	// awsRegion is an AWS region (us-east-1, us-gov-west-1, eu-central-2).
	awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-[0-9]+$`)
	// gcpProject is a Google Cloud project id: 6 to 30 lower-case letters,
	// digits and hyphens, starting with a letter, not ending with a hyphen.
	gcpProject = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	// gcpLocation is a Vertex AI location (us-central1, europe-west4,
	// global, us).
	gcpLocation = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}[a-z0-9]$`)
	// envName is an environment variable's name.
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// checkCloud checks a bedrock model's region (optional: AWS_REGION
// otherwise) and a vertex model's project, location and credentials_env
// (all three required).
func (fm fileModel) checkCloud(api string) error {
	switch api {
	case APIBedrock:
		if fm.Region != "" && !awsRegion.MatchString(fm.Region) {
			return fmt.Errorf("region %q is not an AWS region name (like us-east-1)", fm.Region)
		}
	case APIVertex:
		switch {
		case !gcpProject.MatchString(fm.Project):
			return fmt.Errorf("project %q must be a Google Cloud project id (6 to 30 lower-case letters, digits and hyphens, starting with a letter)", fm.Project)
		case !gcpLocation.MatchString(fm.Location):
			return fmt.Errorf("location %q must be a Vertex AI location (like us-central1 or global)", fm.Location)
		case !envName.MatchString(fm.CredentialsEnv):
			return fmt.Errorf("credentials_env %q must name the environment variable holding the service-account JSON file's path", fm.CredentialsEnv)
		}
	}
	if fm.CredentialsEnv != "" && !envName.MatchString(fm.CredentialsEnv) {
		return fmt.Errorf("credentials_env %q is not an environment variable's name", fm.CredentialsEnv)
	}
	return nil
}

// serves says whether a request that can be sent to the APIs r.APIs may
// go to m (every API when r names none).
func (r Request) serves(m Model) bool {
	return len(r.APIs) == 0 || slices.Contains(r.APIs, m.API) || slices.Contains(r.APIs, m.Wire())
}

// apiRank is the place of m's API (or of the wire format it speaks) in
// r's preference (0 first).
func (r Request) apiRank(m Model) int {
	rank := len(r.APIs)
	for _, a := range [...]string{m.API, m.Wire()} {
		if i := slices.Index(r.APIs, a); i >= 0 {
			rank = min(rank, i)
		}
	}
	return rank
}

// Wire is the request format m's upstream reads: its API's, except
// Claude on Vertex AI (api vertex, vendor anthropic), which reads
// Anthropic's Messages (rawPredict), so a Messages request passes
// through to it as to an anthropic model.
func (m Model) Wire() string {
	if m.API == APIVertex && m.Vendor == "anthropic" {
		return APIAnthropic
	}
	return m.API
}

// errModelAPI refuses a model (or a tier, or auto) named that no model of
// the APIs the request can be sent to serves.
func errModelAPI(name string, m *Model, r Request) error {
	what := fmt.Sprintf("no model that %q stands for", name)
	if m != nil {
		what = fmt.Sprintf("the model %q is reached through the %s API, and", name, m.API)
	}
	msg := fmt.Sprintf("%s this route's requests can be sent only to models of the %s API", what, strings.Join(r.APIs, ", "))
	if m != nil && m.API == APIAnthropic {
		msg += "; send Anthropic models Messages requests (POST /v1/messages)"
	}
	msg += ", or name model auto, a tier or another model (GET /v1/models lists each model's api)"
	return &domain.Error{Kind: domain.ErrInvalid, Code: "model_api_unsupported", Field: "model", Message: msg}
}
