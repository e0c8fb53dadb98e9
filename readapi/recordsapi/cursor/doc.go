// Package cursor makes and reads the records service's parcel-search
// cursors: opaque strings that continue one search (its bounding box and
// layer filter) after a (county, APN) key, authenticated by an HMAC under
// the installation's cursor key (Codec). A cursor that does not decode,
// has the wrong length or content, was changed in any byte, was made
// under another key, or belongs to another search is a 400 with code
// invalid_cursor, never a database error.
package cursor
