// Package docseed fills a new local answer index with arr's own
// documentation: one document per operation of the services' OpenAPI
// documents, arr's reference documents (docs/*.md, built into the binary,
// never read from the working directory) by section, and the records
// service's data-sources page; and it turns pages, text and JSON into the
// index documents commands.IndexDocumentHandler records.
package docseed
