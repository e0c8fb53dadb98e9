package recordsapi

import (
	"context"
	"embed"
	"html/template"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/projections/parcels"
)

//go:embed templates/*.html
var templateFiles embed.FS

// report computes the data-source report now, from the tables that feed
// each layer.
func (s *server) report(ctx context.Context) (parcels.DataSourceReport, error) {
	return s.parcels.DataSources(ctx, s.gaz, time.Now())
}

// dataSources is GET /api/v1/data-sources.
func (s *server) dataSources(c *gin.Context) error {
	r, err := s.report(c.Request.Context())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}

// dataSourcesPage is GET /data-sources: the same report as an HTML page.
func (s *server) dataSourcesPage(c *gin.Context) error {
	r, err := s.report(c.Request.Context())
	if err != nil {
		return err
	}
	t, err := template.ParseFS(templateFiles, "templates/data_sources.html")
	if err != nil {
		return err
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	c.Status(http.StatusOK)
	if err := t.Execute(c.Writer, r); err != nil {
		s.d.Logger.Warn("rendering the data-sources page", "err", err)
	}
	return nil
}
