package app

import (
	"context"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections/logproofs"
)

// LogProofs is the signed event log's heads and proofs, for the public
// routes that let anyone check the log (projections/logproofs).
type LogProofs interface {
	LatestHead(ctx context.Context) (logproofs.Head, error)
	Heads(ctx context.Context, since uint64, limit int) ([]logproofs.Head, error)
	Inclusion(ctx context.Context, position, size uint64) (logproofs.InclusionProof, error)
	Consistency(ctx context.Context, first, second uint64) (logproofs.ConsistencyProof, error)
}

// ServedRecorder records that an answer was served (readapi/answerapi.Served
// batches the events).
type ServedRecorder interface {
	Record(e answer.AnswerServed)
}
