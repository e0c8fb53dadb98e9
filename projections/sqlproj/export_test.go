package sqlproj

import "context"

// RolePassword is role's password, for tests that log in as it the way
// arr does.
func RolePassword(ctx context.Context, e *Engine, role string) (string, error) {
	return e.rolePassword(ctx, role)
}

// ScramVerifier is scramVerifier, for tests.
var ScramVerifier = scramVerifier
