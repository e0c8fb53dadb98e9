package export

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/arr-dev/arr/eventstore"
)

// ndjsonEncoder writes one event a line as encoding/json marshals
// eventstore.Event: data as stored, metadata as the leaf hash reads it.
type ndjsonEncoder struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newNDJSON(w io.Writer) *ndjsonEncoder {
	bw := bufio.NewWriterSize(w, 1<<20)
	return &ndjsonEncoder{w: bw, enc: json.NewEncoder(bw)}
}

func (n *ndjsonEncoder) write(evs []eventstore.Event) error {
	for i := range evs {
		if err := n.enc.Encode(&evs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (n *ndjsonEncoder) close() error { return n.w.Flush() }
