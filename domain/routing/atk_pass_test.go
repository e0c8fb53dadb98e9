package routing_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/routing"
)

// TestAtkPassAzureDeploymentDotSegments: a deployment is one path segment
// of {base_url}/openai/deployments/{deployment}/chat/completions, escaped
// with url.PathEscape, which leaves "." and ".." as they are: a catalog's
// deployment ".." (or an upstream_model ".." that the deployment defaults
// to) is accepted and makes the call /openai/deployments/../chat/completions,
// which the resource's front end resolves to /openai/chat/completions.
// The catalog refuses "/", "?", "#" and "&" in a deployment; the dot
// segments pass.
func TestAtkPassAzureDeploymentDotSegments(t *testing.T) {
	for _, extra := range []string{
		`"api":"azure_openai","api_version":"2024-10-21","deployment":".."`,
		`"api":"azure_openai","api_version":"2024-10-21","deployment":"."`,
		`"api":"azure_openai","api_version":"2024-10-21","upstream_model":".."`,
	} {
		if c, err := routing.ParseCatalog(oneModel(extra)); err == nil {
			m, _ := c.Model("m")
			t.Errorf("%s accepted: deployment %q", extra, m.Deployment)
		}
	}
}
