package kurrentdb

// Aliases of the pure helpers for the external test package.
var (
	ToRevision      = toRevision
	IsSystem        = isSystem
	CurrentRevision = currentRevision
	IsInvalidPos    = isInvalidPosition
	Translate       = translate
	EncodeMetadata  = encodeMetadata
	DecodeMetadata  = decodeMetadata
	Convert         = convert
	MatchIDs        = matchIDs
	Validate        = validate
)

// Outcomes of MatchIDs.
const (
	IDsAbsent  = int(idsAbsent)
	IDsPresent = int(idsPresent)
	IDsPartial = int(idsPartial)
)
