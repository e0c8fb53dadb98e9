package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/logproofs"
	"github.com/arr-dev/arr/projections/sqlproj"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/app"
)

// buildApplication is arr's composition root: the one place the
// application is put together, from the system's Config, store, read
// models and keys. `arr up`, `arr serve ROLE`, every CLI command and the
// component tests get their application here.
//
// Every command is built (commands.New); the parts only some roles use are
// built for those roles: the completion use case and the audit chain for
// the gateway (they need the audit hash key), the research pipeline and
// the served-answers recorder for the answer service, billing and mail
// for the services with account pages. Their long-running halves (the
// chain's sequencer, the recorder's flush, the local index's refresh) are
// kept on the system for the process's lifecycle (components).
func (s *system) buildApplication(ctx context.Context, o openOptions) (app.Application, error) {
	var researcher *research.Researcher
	if slices.Contains(o.roles, "answer") {
		var err error
		if researcher, err = s.openResearch(); err != nil {
			return app.Application{}, fmt.Errorf("answer: %w", err)
		}
	}
	cmds, err := s.commands(researcher)
	if err != nil {
		return app.Application{}, err
	}
	a, err := app.New(s.pool, cmds)
	if err != nil {
		return app.Application{}, err
	}
	if s.replica != nil {
		a.Queries, a.ReadReplica = app.NewQueriesOn(s.pool, s.replica), s.replicaHealth
	}
	// Admission (key look-ups, /healthz's database and projections
	// checks) reads on its own pool (system.admission).
	a.Queries.Identities, a.Queries.Status = identity.NewQueries(s.admission), projections.NewStatus(s.admission)
	a.Now, a.WaitFor, a.Head = s.now, s.waitFor, s.store.Head
	if _, ok := s.store.(*postgres.Store); ok {
		a.Head = func(ctx context.Context) (uint64, error) { return postgres.ReadHead(ctx, s.admission) }
	}
	if s.ledger, err = spend.NewLedger(s.pool, s.now); err != nil {
		return app.Application{}, err
	}
	a.Queries.Spend = s.ledger
	if a.Queries.Gazetteer, err = demodata.LoadGazetteer(); err != nil {
		return app.Application{}, err
	}
	if s.keys != nil {
		a.Queries.Contacts = contactKeys{s.keys}
	}
	if p, err := s.logProver(); err != nil {
		return app.Application{}, err
	} else if p != nil {
		a.Queries.Log = logproofs.New(p)
	}
	a.CursorKey = s.cursorKey
	a.Map = app.MapSettings{BasemapURL: s.cfg.MapBasemapURL, Attribution: s.cfg.MapAttribution}
	if a.Mailer, err = openMailer(s.cfg, s.log, o.roles); err != nil {
		return app.Application{}, err
	}
	if webRoles(o.roles) {
		if a.Billing, err = openBilling(s.cfg, a, s.log); err != nil {
			return app.Application{}, err
		}
	}
	if slices.Contains(o.roles, "gateway") {
		if a.Completions, a.Embeddings, s.chain, err = s.openCompletions(a); err != nil {
			return app.Application{}, err
		}
	}
	if researcher != nil {
		a.Answers = s.answers(researcher, cmds)
	}
	return a, nil
}

// commands builds every command handler over the store; researcher is nil
// outside the answer role.
func (s *system) commands(researcher *research.Researcher) (commands.Commands, error) {
	cfg := commands.Config{Store: commands.TraceAppends(s.store, s.traces.Tracer()), Clock: s.now, SQLProjections: s.sql, BuiltIn: s.isBuiltIn,
		WebhookPrivate: s.cfg.WebhookPrivate == "allow"}
	if s.keys != nil { // (a nil *Keyring in the interface would not read as nil)
		cfg.ContactKeys = s.keys
	}
	if researcher != nil {
		cfg.Research = researcher
	}
	return commands.New(cfg)
}

// isBuiltIn says whether name is a built-in projection's (an analyst's SQL
// projection may not take it).
func (s *system) isBuiltIn(name string) bool {
	p, err := s.runner.Get(name)
	return err == nil && !sqlproj.IsSQL(p)
}

// answers is the answer service's part of the application; the recorder's
// flush and the local index's refresh are kept for the lifecycle.
func (s *system) answers(r *research.Researcher, cmds commands.Commands) app.Answers {
	s.served = answerapi.NewServed(cmds.RecordAnswersServed, s.log)
	synthesis := "extractive"
	if s.answerModel != nil {
		synthesis = "llm, extractive when the model does not answer"
	}
	return app.Answers{Generation: r.Generation, Resolve: r.Resolve, CheckFormat: r.CheckFormat, Synthesis: synthesis, Served: s.served}
}

// webRoles reports whether roles include an HTTP service.
func webRoles(roles []string) bool {
	return slices.ContainsFunc(roles, func(r string) bool { return r != "projections" })
}

// contactKeys gives the records service the data-key ring as
// app.ContactKeys.
type contactKeys struct{ kr *datakeys.Keyring }

func (k contactKeys) Opener(ctx context.Context, account uuid.UUID) (app.ContactOpener, error) {
	return k.kr.Opener(ctx, account)
}
