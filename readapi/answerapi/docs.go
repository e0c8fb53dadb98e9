package answerapi

import (
	"context"
	"html/template"
	"net/http"

	"github.com/arr-dev/arr/projections/answerdocs"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Docs reads the local index's documents.
type Docs interface {
	Document(ctx context.Context, docID string) (answerdocs.IndexedDoc, error)
}

// healthReport is the answer service's /healthz body.
type healthReport struct {
	httpx.HealthReport
	// Synthesis is how answers are written: "extractive" when no language
	// model is configured.
	Synthesis string `json:"synthesis,omitempty"`
}

var docPage = template.Must(template.New("doc").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title></head>
<body><main>
<h1>{{.Title}}</h1>
{{range .Sections}}<section{{if .Anchor}} id="{{.Anchor}}"{{end}}>
{{with .Heading}}<h2>{{range $i, $h := .}}{{if $i}} › {{end}}{{$h}}{{end}}</h2>{{end}}
{{range .Blocks}}{{if eq .Kind "code"}}<pre><code>{{.Text}}</code></pre>
{{else if eq .Kind "term"}}<p><strong>{{.Text}}</strong></p>
{{else if eq .Kind "item"}}<ul><li>{{.Text}}</li></ul>
{{else if eq .Kind "row"}}<p class="row">{{.Text}}</p>
{{else}}<p>{{.Text}}</p>
{{end}}{{end}}</section>
{{end}}<footer><p>Indexed {{.IndexedAt.Format "2006-01-02 15:04 MST"}} from {{.Origin}}</p></footer>
</main></body></html>
`))

// docsHandler serves GET /docs/{doc_id}: a document of the local index
// that was read from a local file, as HTML, so that the URL an answer
// cites for it resolves. Public, like the sources it cites.
func docsHandler(docs Docs) httpx.Handler {
	return func(c *gin.Context) error {
		if docs == nil {
			return domain.NotFound("document_not_found", "this server has no local index")
		}
		d, err := docs.Document(c.Request.Context(), c.Param("id"))
		if err != nil {
			return err
		}
		if d.URL != "" { // read from the web: its own URL is where it lives
			c.Redirect(http.StatusFound, d.URL)
			return nil
		}
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		c.Status(http.StatusOK)
		if err := docPage.Execute(c.Writer, d); err != nil {
			_ = c.Error(err)
		}
		return nil
	}
}
