package commands

import (
	"errors"
	"time"

	"github.com/arr-dev/arr/adapters/datakeys"
)

// Commands gathers every command handler.
type Commands struct {
	CreateAccount  *CreateAccountHandler
	IssueKey       *IssueKeyHandler
	RevokeKey      *RevokeKeyHandler
	ChangePlan     *ChangePlanHandler
	RequestSignIn  *RequestSignInHandler
	CompleteSignIn *CompleteSignInHandler
	EndSession     *EndSessionHandler
	CountCalls     *CountCallsHandler
	SubmitFeedback *SubmitFeedbackHandler
	LoadLayer      *LoadLayerHandler
	// ImportList and EraseContactData seal and destroy contact data with
	// the data-key ring; they are nil when New was given none.
	ImportList       *ImportListHandler
	EraseContactData *EraseContactDataHandler
	// DefineSQLProjection and DropSQLProjection record analysts' SQL
	// projections; nil until WithSQLProjections gives them their checker.
	DefineSQLProjection *DefineSQLProjectionHandler
	DropSQLProjection   *DropSQLProjectionHandler
}

// WithSQLProjections adds the SQL projection commands: checker checks a
// definition against the database, builtIn says whether a name is a
// built-in projection's.
func (c Commands) WithSQLProjections(store Appender, checker SQLProjectionChecker, builtIn func(string) bool, clock Clock) (Commands, error) {
	var err error
	if c.DefineSQLProjection, err = NewDefineSQLProjectionHandler(store, checker, builtIn, clock); err != nil {
		return Commands{}, err
	}
	if c.DropSQLProjection, err = NewDropSQLProjectionHandler(store, clock); err != nil {
		return Commands{}, err
	}
	return c, nil
}

// Clock returns the current time; tests pass a fixed one.
type Clock func() time.Time

// New wires every handler to the store. keys seals imported lists'
// contact columns; with nil, the commands that need it are nil.
func New(store Appender, clock Clock, keys *datakeys.Keyring) (Commands, error) {
	if store == nil {
		return Commands{}, errors.New("commands: nil event store")
	}
	if clock == nil {
		clock = time.Now
	}
	ca, err := NewCreateAccountHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	ik, err := NewIssueKeyHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	rk, err := NewRevokeKeyHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	cp, err := NewChangePlanHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	rs, err := NewRequestSignInHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	cs, err := NewCompleteSignInHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	es, err := NewEndSessionHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	cc, err := NewCountCallsHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	sf, err := NewSubmitFeedbackHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	ll, err := NewLoadLayerHandler(store, clock)
	if err != nil {
		return Commands{}, err
	}
	c := Commands{CreateAccount: ca, IssueKey: ik, RevokeKey: rk, ChangePlan: cp, RequestSignIn: rs, CompleteSignIn: cs, EndSession: es, CountCalls: cc, SubmitFeedback: sf, LoadLayer: ll}
	if keys != nil {
		if c.ImportList, err = NewImportListHandler(store, keys, clock); err != nil {
			return Commands{}, err
		}
		if c.EraseContactData, err = NewEraseContactDataHandler(store, keys, clock); err != nil {
			return Commands{}, err
		}
	}
	return c, nil
}
