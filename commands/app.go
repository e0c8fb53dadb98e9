package commands

import (
	"errors"
	"time"

	"github.com/arr-dev/arr/eventstore"
)

// Commands gathers every command handler.
type Commands struct {
	CreateAccount *CreateAccountHandler
	IssueKey      *IssueKeyHandler
	RevokeKey     *RevokeKeyHandler
}

// Clock returns the current time; tests pass a fixed one.
type Clock func() time.Time

// New wires every handler to the store.
func New(store eventstore.Store, clock Clock) (Commands, error) {
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
	return Commands{CreateAccount: ca, IssueKey: ik, RevokeKey: rk}, nil
}
