package commands_test

import (
	"testing"

	"github.com/arr-dev/arr/commands"
)

func TestNewMetadata(t *testing.T) {
	tests := []struct {
		name, actor, requestID string
		want                   commands.Metadata
	}{
		{name: "a request's id is its request and correlation id", actor: "session:s1", requestID: "req-1",
			want: commands.Metadata{Actor: "session:s1", RequestID: "req-1", CorrelationID: "req-1"}},
		{name: "a key's call", actor: "key:k1", requestID: "0b8e…",
			want: commands.Metadata{Actor: "key:k1", RequestID: "0b8e…", CorrelationID: "0b8e…"}},
		{name: "the CLI has no request", actor: "cli:arr keys issue",
			want: commands.Metadata{Actor: "cli:arr keys issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := commands.NewMetadata(tt.actor, tt.requestID)
			if got != tt.want {
				t.Fatalf("NewMetadata(%q, %q) = %+v; want %+v", tt.actor, tt.requestID, got, tt.want)
			}
			if got.CausationID != "" {
				t.Fatalf("causation %q: only the caller that knows the cause sets it", got.CausationID)
			}
		})
	}
}
