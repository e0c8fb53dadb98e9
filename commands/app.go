package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

// Commands gathers every command handler. New builds all of them: none is
// ever nil. A handler whose dependency the process lacks (Config says
// which) refuses with a domain error of kind ErrUnavailable instead.
type Commands struct {
	CreateAccount *CreateAccountHandler
	IssueKey      *IssueKeyHandler
	RevokeKey     *RevokeKeyHandler
	// SetKeyLimits and SetAccountBudget change gateway keys' limits and
	// accounts' shared budgets.
	SetKeyLimits     *SetKeyLimitsHandler
	SetAccountBudget *SetAccountBudgetHandler
	// SetGuardrails sets an account's or a gateway key's guardrails.
	SetGuardrails  *SetGuardrailsHandler
	ChangePlan     *ChangePlanHandler
	RequestSignIn  *RequestSignInHandler
	CompleteSignIn *CompleteSignInHandler
	EndSession     *EndSessionHandler
	CountCalls     *CountCallsHandler
	SubmitFeedback *SubmitFeedbackHandler
	LoadLayer      *LoadLayerHandler
	// ImportList and EraseContactData seal and destroy contact data with
	// Config.ContactKeys.
	ImportList       *ImportListHandler
	EraseContactData *EraseContactDataHandler
	// CreateMonitor seals each monitor's webhook secret with
	// Config.ContactKeys; DeleteMonitor stops one.
	CreateMonitor *CreateMonitorHandler
	DeleteMonitor *DeleteMonitorHandler
	// DefineSQLProjection and DropSQLProjection record analysts' SQL
	// projections; the definition is checked by Config.SQLProjections.
	DefineSQLProjection *DefineSQLProjectionHandler
	DropSQLProjection   *DropSQLProjectionHandler
	// SynthesizeAnswer, RecordAnswersServed and IndexDocument are the
	// answer service's: research and record an answer (with
	// Config.Research), count answers served, add a document to the local
	// index.
	SynthesizeAnswer    *SynthesizeAnswerHandler
	RecordAnswersServed *RecordAnswersServedHandler
	IndexDocument       *IndexDocumentHandler
	// RequestResearchJob and CancelResearchJob start and stop the answer
	// service's research jobs (a job's webhook secret is sealed with
	// Config.ContactKeys).
	RequestResearchJob *RequestResearchJobHandler
	CancelResearchJob  *CancelResearchJobHandler
}

// Clock returns the current time; tests pass a fixed one.
type Clock func() time.Time

// ContactKeys seals and destroys imported lists' contact data, one data
// key per account; *datakeys.Keyring is one.
type ContactKeys interface {
	Sealer(ctx context.Context, account uuid.UUID) (*datakeys.Sealer, error)
	Destroy(ctx context.Context, account uuid.UUID) (bool, error)
}

// Config is what New builds the commands from.
type Config struct {
	// Store is the event log; required.
	Store Appender
	// Clock; default time.Now.
	Clock Clock
	// ContactKeys; nil (a process that did not load the records master
	// key) makes ImportList and EraseContactData refuse with
	// contact_keys_not_loaded.
	ContactKeys ContactKeys
	// SQLProjections checks analysts' definitions and BuiltIn says whether
	// a name is a built-in projection's; with either nil,
	// DefineSQLProjection refuses with sql_projections_unavailable.
	SQLProjections SQLProjectionChecker
	BuiltIn        func(name string) bool
	// Research writes answers; nil (a process without the answer role)
	// makes SynthesizeAnswer refuse with research_not_configured.
	Research Researcher
	// WebhookPrivate lets monitors' webhook URLs name loopback and
	// private addresses (ARR_WEBHOOK_PRIVATE=allow: tests).
	WebhookPrivate bool
}

// New wires every handler to the store.
func New(cfg Config) (Commands, error) {
	if cfg.Store == nil {
		return Commands{}, errors.New("commands: nil event store")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.ContactKeys == nil {
		cfg.ContactKeys = noContactKeys{}
	}
	if cfg.SQLProjections == nil || cfg.BuiltIn == nil {
		cfg.SQLProjections, cfg.BuiltIn = noSQLProjections{}, func(string) bool { return false }
	}
	if cfg.Research == nil {
		cfg.Research = noResearch{}
	}
	var c Commands
	store, clock := cfg.Store, cfg.Clock
	err := errors.Join(
		build(&c.CreateAccount, func() (*CreateAccountHandler, error) { return NewCreateAccountHandler(store, clock) }),
		build(&c.IssueKey, func() (*IssueKeyHandler, error) { return NewIssueKeyHandler(store, clock) }),
		build(&c.RevokeKey, func() (*RevokeKeyHandler, error) { return NewRevokeKeyHandler(store, clock) }),
		build(&c.SetKeyLimits, func() (*SetKeyLimitsHandler, error) { return NewSetKeyLimitsHandler(store, clock) }),
		build(&c.SetAccountBudget, func() (*SetAccountBudgetHandler, error) { return NewSetAccountBudgetHandler(store, clock) }),
		build(&c.SetGuardrails, func() (*SetGuardrailsHandler, error) {
			return NewSetGuardrailsHandler(store, clock, cfg.WebhookPrivate)
		}),
		build(&c.ChangePlan, func() (*ChangePlanHandler, error) { return NewChangePlanHandler(store, clock) }),
		build(&c.RequestSignIn, func() (*RequestSignInHandler, error) { return NewRequestSignInHandler(store, clock) }),
		build(&c.CompleteSignIn, func() (*CompleteSignInHandler, error) { return NewCompleteSignInHandler(store, clock) }),
		build(&c.EndSession, func() (*EndSessionHandler, error) { return NewEndSessionHandler(store, clock) }),
		build(&c.CountCalls, func() (*CountCallsHandler, error) { return NewCountCallsHandler(store, clock) }),
		build(&c.SubmitFeedback, func() (*SubmitFeedbackHandler, error) { return NewSubmitFeedbackHandler(store, clock) }),
		build(&c.LoadLayer, func() (*LoadLayerHandler, error) { return NewLoadLayerHandler(store, clock) }),
		build(&c.ImportList, func() (*ImportListHandler, error) { return NewImportListHandler(store, cfg.ContactKeys, clock) }),
		build(&c.EraseContactData, func() (*EraseContactDataHandler, error) {
			return NewEraseContactDataHandler(store, cfg.ContactKeys, clock)
		}),
		build(&c.CreateMonitor, func() (*CreateMonitorHandler, error) {
			return NewCreateMonitorHandler(store, cfg.ContactKeys, clock, cfg.WebhookPrivate)
		}),
		build(&c.DeleteMonitor, func() (*DeleteMonitorHandler, error) { return NewDeleteMonitorHandler(store, clock) }),
		build(&c.DefineSQLProjection, func() (*DefineSQLProjectionHandler, error) {
			return NewDefineSQLProjectionHandler(store, cfg.SQLProjections, cfg.BuiltIn, clock)
		}),
		build(&c.DropSQLProjection, func() (*DropSQLProjectionHandler, error) { return NewDropSQLProjectionHandler(store, clock) }),
		build(&c.SynthesizeAnswer, func() (*SynthesizeAnswerHandler, error) {
			return NewSynthesizeAnswerHandler(store, clock, cfg.Research)
		}),
		build(&c.RecordAnswersServed, func() (*RecordAnswersServedHandler, error) { return NewRecordAnswersServedHandler(store) }),
		build(&c.IndexDocument, func() (*IndexDocumentHandler, error) { return NewIndexDocumentHandler(store, clock) }),
		build(&c.RequestResearchJob, func() (*RequestResearchJobHandler, error) {
			return NewRequestResearchJobHandler(store, cfg.ContactKeys, clock, cfg.WebhookPrivate)
		}),
		build(&c.CancelResearchJob, func() (*CancelResearchJobHandler, error) { return NewCancelResearchJobHandler(store, clock) }),
	)
	if err != nil {
		return Commands{}, err
	}
	return c, nil
}

// build sets *h to what newHandler returns.
func build[H any](h **H, newHandler func() (*H, error)) error {
	v, err := newHandler()
	*h = v
	return err
}

// unavailable is the refusal of a command whose dependency this process
// does not have.
func unavailable(code, message string) error {
	return &domain.Error{Kind: domain.ErrUnavailable, Code: code, Message: message}
}

// noContactKeys stands in for the data-key ring in a process that did not
// load the records master key.
type noContactKeys struct{}

var errNoContactKeys = unavailable("contact_keys_not_loaded",
	"this process has not loaded the records master key, which contact data needs (the records role and arr records commands load it)")

func (noContactKeys) Sealer(context.Context, uuid.UUID) (*datakeys.Sealer, error) {
	return nil, errNoContactKeys
}
func (noContactKeys) Destroy(context.Context, uuid.UUID) (bool, error) {
	return false, errNoContactKeys
}

// noSQLProjections stands in for the SQL projection engine.
type noSQLProjections struct{}

var errNoSQLProjections = unavailable("sql_projections_unavailable", "this process cannot check SQL projection definitions")

func (noSQLProjections) DefinitionName(string, string) (string, error) {
	return "", errNoSQLProjections
}
func (noSQLProjections) CheckDefinition(context.Context, string, string) error {
	return errNoSQLProjections
}

// noResearch stands in for the answer service's research pipeline.
type noResearch struct{}

var errNoResearch = unavailable("research_not_configured", "this process does not run the answer service, which writes answers")

func (noResearch) Answer(context.Context, answer.Request) (research.Result, error) {
	return research.Result{}, errNoResearch
}
func (noResearch) Backend() string { return "none" }
