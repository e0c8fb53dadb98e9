package app

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/answercache"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerusage"
	"github.com/arr-dev/arr/projections/auditentries"
	"github.com/arr-dev/arr/projections/callusage"
	"github.com/arr-dev/arr/projections/gatewayusage"
	"github.com/arr-dev/arr/projections/guardrails"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/monitors"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/projections/researchjobs"
	"github.com/arr-dev/arr/projections/tierquality"
)

// Application is everything a service, the CLI or a test calls: commands
// change state, queries read it, and the use cases that are more than one
// command (a completion, billing) sit beside them. cmd/arr builds it in
// one place from one Config (its composition root); the servers receive
// it and build nothing of their own.
type Application struct {
	// Commands: every handler is set (commands.New).
	Commands commands.Commands
	Queries  Queries
	// Completions is the gateway's completion use case: routing, failover,
	// the cache, usage and the audit record. It needs the audit hash key,
	// so only an application built for the gateway role has one; the
	// gateway's server refuses to start without it.
	Completions *complete.Handler
	// Embeddings is the gateway's embeddings use case (POST
	// /v1/embeddings): routing over the catalog's embedding models,
	// failover, usage and the audit record, on the completions' upstream
	// client and audit chain. Built with Completions, for the gateway role.
	Embeddings *embed.Handler
	// Answers is how the answer service writes and records answers.
	Answers Answers
	// Billing is paid plans through Stripe (Checkout, the billing portal,
	// webhooks). Nil when Stripe is not configured: the billing routes and
	// the account pages' upgrades answer 503 billing_not_configured.
	Billing *billing.Billing
	// Mailer sends the account pages' sign-in links.
	Mailer Mailer
	// Now is the clock of commands and queries (tests move it).
	Now func() time.Time
	// Map is the records service's map page's base map.
	Map MapSettings
	// CursorKey authenticates the records service's paging cursors
	// (readapi/recordsapi/cursor). Every process serving one database has
	// the same: cmd/arr derives it from the records master key the
	// database is bound to. The records server refuses to start without
	// one.
	CursorKey []byte
	// WaitFor gives read-your-writes: it returns once the named
	// projection has applied position pos (bounded; an error after the
	// bound).
	WaitFor func(ctx context.Context, projection string, pos uint64) error
	// ReadReplica reports the streaming replica the read models are read
	// from; nil when they are read from the primary only.
	ReadReplica func() projections.ReplicaHealth
	// Head returns the event log's head position (lag in /healthz).
	Head func(ctx context.Context) (uint64, error)
}

// Answers is the answer service's part: the commands are
// Commands.SynthesizeAnswer and RecordAnswersServed, the read models
// Queries.AnswerCache and AnswerDocs.
type Answers struct {
	// Generation is the local index's current generation (nil: web
	// search): part of every answer's cache key.
	Generation func(ctx context.Context) (uint64, error)
	// Resolve makes a follow-up question self-contained against the
	// conversation's earlier turns and says how ("llm", "extractive",
	// "unchanged"); nil: questions are taken as asked.
	Resolve func(ctx context.Context, q string, ms []answer.Message) (string, string)
	// CheckFormat refuses a response format the service cannot write
	// (json_schema without a language model: model_required); nil
	// checks nothing before the synthesis, which refuses it then.
	CheckFormat func(answer.ResponseFormat) error
	// Synthesis says in /healthz how answers are written ("extractive",
	// or with a language model).
	Synthesis string
	// Served records one AnswerServed per answered call without making
	// the call wait for the log (a process component flushes it).
	Served ServedRecorder
}

// Mailer sends one e-mail (adapters/mail).
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Queries gathers the read side, one field per read model, and the
// reference data the services answer from.
type Queries struct {
	Identities Identities
	Parcels    Parcels
	// Features is the parcels read model as the OGC API reads it.
	Features     Features
	Lists        Lists
	Monitors     Monitors
	Usage        Usage
	AnswerUsage  AnswerUsage
	GatewayUsage GatewayUsage
	Audit        Audit
	TierQuality  TierQuality
	AnswerCache  AnswerCache
	AnswerDocs   AnswerDocs
	// ResearchJobs is the answer service's research jobs.
	ResearchJobs ResearchJobs
	Status       Status
	// Log serves the signed event log's heads and proofs; nil with an
	// event store that keeps no Merkle tree (KurrentDB): /v1/log answers
	// 503 then.
	Log LogProofs
	// Contacts opens imported lists' sealed contact columns; nil in a
	// process that did not load the records master key (include_contact
	// answers 503).
	Contacts ContactKeys
	// Gazetteer names the states and counties.
	Gazetteer *records.Gazetteer
	// Spend is the spend of budgets in their current period
	// (commands/spend); nil: not shown.
	Spend Spend
	// Guardrails are the accounts' and keys' guardrails, read on the
	// primary (a guardrail set holds from the next request on).
	Guardrails Guardrails
}

// New gathers the commands and the queries over pool, where the
// projections keep the read models. The rest of the Application is set by
// the caller (cmd/arr's composition root).
func New(pool *pgxpool.Pool, cmds commands.Commands) (Application, error) {
	if pool == nil {
		return Application{}, errors.New("app: nil pool")
	}
	return Application{Commands: cmds, Queries: NewQueries(pool), Now: time.Now}, nil
}

// NewQueries reads every read model through pool.
func NewQueries(pool *pgxpool.Pool) Queries { return NewQueriesOn(pool, pool) }

// NewQueriesOn reads the read models through read (a streaming replica's
// router, adapters/replica), except what must be exact on the primary:
// the identities (a revoked key fails closed at once) and the
// projections' own status. The read models' queries honour a request's
// statement timeout (projections.WithStatementTimeout, projections.Timed).
func NewQueriesOn(primary *pgxpool.Pool, read projections.DB) Queries {
	read = projections.Timed(read)
	return Queries{
		Identities:   identity.NewQueries(primary),
		Parcels:      parcels.NewQueries(read),
		Features:     parcels.NewQueries(read),
		Lists:        lists.NewQueries(read),
		Monitors:     monitors.NewQueries(read),
		Usage:        callusage.NewQueries(read),
		AnswerUsage:  answerusage.NewQueries(read),
		GatewayUsage: gatewayusage.NewQueries(read),
		Audit:        auditentries.NewQueries(read),
		TierQuality:  tierquality.NewQueries(read),
		AnswerCache:  answercache.NewQueries(read),
		AnswerDocs:   answerdocs.NewQueries(read),
		// The worker and the job routes read their own writes: the
		// primary.
		ResearchJobs: researchjobs.NewQueries(projections.Timed(primary)),
		Status:       projections.NewStatus(primary),
		Guardrails:   guardrails.NewQueries(projections.Timed(primary)),
	}
}

// MapSettings is the base map under the records service's map page: a
// raster tile URL template ({z}, {x}, {y}) and its attribution; empty
// shows the parcels on a plain background.
type MapSettings struct {
	BasemapURL, Attribution string
}
