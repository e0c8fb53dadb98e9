// Package docseed fills a new local answer index with arr's own
// documentation: one document per operation of the services' OpenAPI
// documents, README.md and every docs/*.md by section when arr runs from
// its source tree, and the records service's data-sources page; and it turns pages, text and
// JSON into the index documents commands.IndexDocumentHandler records.
package docseed
