package recordsapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/projections/parcels"
)

// ogcOpenAPI writes the OGC API's own OpenAPI document (its service-desc)
// from the service's: the operations under ogcPrefix, with paths relative
// to it (servers: ogcPrefix), and each collection's items path written
// out with its queryables as parameters (OGC API – Features – Part 3,
// queryables as query parameters), which is how a client such as GDAL's
// OAPIF driver learns what it may filter on.
func ogcOpenAPI(doc []byte, cols []parcels.Collection) ([]byte, error) {
	var full map[string]any
	if err := json.Unmarshal(doc, &full); err != nil {
		return nil, fmt.Errorf("ogc openapi: %w", err)
	}
	paths, _ := full["paths"].(map[string]any)
	out := map[string]any{}
	for p, ops := range paths {
		if p == ogcPrefix {
			out["/"] = ops
		} else if rest, ok := strings.CutPrefix(p, ogcPrefix+"/"); ok {
			out["/"+rest] = ops
		}
	}
	items, ok := out["/collections/{collectionId}/items"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ogc openapi: the service's document has no %s/collections/{collectionId}/items", ogcPrefix)
	}
	for _, col := range cols {
		out["/collections/"+col.ID+"/items"] = collectionItems(items, col)
	}
	info, _ := full["info"].(map[string]any)
	version, _ := info["version"].(string)
	return json.MarshalIndent(map[string]any{
		"openapi": full["openapi"],
		"info": map[string]any{"title": "arr records: OGC API – Features", "version": version,
			"description": "The OGC API – Features of the records service (Part 1 Core and GeoJSON, Part 3 filtering with CQL2 text). The service's whole document is /openapi.json."},
		"servers":    []map[string]any{{"url": ogcPrefix}},
		"paths":      out,
		"components": full["components"],
	}, "", "  ")
}

// collectionItems is the items operation of one collection: without the
// collectionId parameter, with one parameter per queryable.
func collectionItems(generic map[string]any, col parcels.Collection) map[string]any {
	get, _ := generic["get"].(map[string]any)
	op := make(map[string]any, len(get))
	for k, v := range get {
		op[k] = v
	}
	op["operationId"] = "ogcItems_" + col.ID
	op["summary"] = col.Title + ": " + col.Description
	var params []any
	list, _ := get["parameters"].([]any)
	for _, p := range list {
		if m, ok := p.(map[string]any); ok && m["name"] == "collectionId" {
			continue
		}
		params = append(params, p)
	}
	for _, q := range col.Queryables {
		schema := map[string]any{"type": q.Type}
		if q.Format != "" {
			schema["format"] = q.Format
		}
		params = append(params, map[string]any{"name": q.Name, "in": "query", "required": false, "style": "form", "explode": false,
			"description": "Only features whose " + q.Name + " equals this (" + q.Description + ").", "schema": schema})
	}
	op["parameters"] = params
	return map[string]any{"get": op}
}
