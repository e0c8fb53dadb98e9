package upstream

import (
	"net/http"
	"net/url"

	"github.com/arr-dev/arr/domain/routing"
)

// APIAzureOpenAI is an Azure OpenAI deployment: POST
// {base_url}/openai/deployments/{deployment}/chat/completions?api-version=
// {api_version}, the chat-completions wire otherwise, with the api-key
// header (the model's api_key_env), or Authorization: Bearer with a
// Microsoft Entra ID token when the model names credentials_env and that
// variable is set.
const APIAzureOpenAI API = "azure_openai"

// azureEndpoint is an Azure OpenAI deployment's chat-completions route
// under the model's base URL (https://{resource}.openai.azure.com).
func azureEndpoint(m routing.Model) endpoint {
	q := url.Values{"api-version": {m.APIVersion}}
	return endpoint{path: "/openai/deployments/" + url.PathEscape(m.Deployment) + "/chat/completions?" + q.Encode(), maxReply: maxChatReply, api: APIAzureOpenAI}
}

// authorizeAzure sets an Azure call's credential: the Entra ID token of
// m.CredentialsEnv when it is set, else the api-key.
func (c *Client) authorizeAzure(h http.Header, m routing.Model, key string) {
	if m.CredentialsEnv != "" {
		if tok := c.cfg.APIKey(m.CredentialsEnv); tok != "" {
			h.Set("Authorization", "Bearer "+tok)
			return
		}
	}
	if key != "" {
		h.Set("Api-Key", key)
	}
}
