package main

import (
	"context"
	"time"

	"github.com/arr-dev/arr/adapters/tracing"
	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
)

// openTraces builds the tracer provider of a serving process from the
// OTEL_* settings (s.traces stays nil, and nothing is traced, when they
// turn traces off, as they do unless asked). The process's lifecycle
// shuts it down last (addTraces); Close does if the process never ran.
func (s *system) openTraces(ctx context.Context, o openOptions) error {
	if len(o.roles) == 0 {
		return nil
	}
	p, err := tracing.New(ctx, s.cfg.Traces.tracing(o.version))
	if err != nil || p == nil {
		return err
	}
	s.traces = p
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	})
	s.log.Info("exporting OpenTelemetry traces", "protocol", p.Protocol(), "endpoint", p.Endpoint())
	return nil
}

// addTraces adds the tracer provider to the process, in the last stage:
// its Stop exports the spans still buffered, those of the requests the
// servers drained included, within the grace period.
func (p *process) addTraces(s *system) {
	if s.traces == nil {
		return
	}
	tp, log := s.traces, s.log
	p.group.Add(lifecycle.Telemetry, lifecycle.Component{Name: "traces",
		Run: func(ctx context.Context) error { <-ctx.Done(); return nil },
		Stop: func(ctx context.Context) error {
			err := tp.Shutdown(ctx)
			if err == nil {
				log.Info("traces flushed")
			}
			return err
		},
	})
}
