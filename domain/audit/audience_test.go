package audit_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
)

func TestAudienceOf(t *testing.T) {
	owner, other := uuid.New(), uuid.New()
	cases := []struct {
		name    string
		owner   uuid.UUID
		reader  uuid.UUID
		auditor bool
		want    audit.Audience
		payload bool
	}{
		{"no key", owner, uuid.Nil, false, audit.Public, false},
		{"another account's key", owner, other, false, audit.Public, false},
		{"the owner's key", owner, owner, false, audit.Owner, true},
		{"the auditor key", owner, uuid.Nil, true, audit.Auditor, true},
		{"the auditor key with another account's key", owner, other, true, audit.Auditor, true},
		{"no key on an entry without an account", uuid.Nil, uuid.Nil, false, audit.Public, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := audit.AudienceOf(tc.owner, tc.reader, tc.auditor)
			if a != tc.want || a.SeesPayload() != tc.payload {
				t.Fatalf("AudienceOf = %s (payload %v), want %s (payload %v)", a, a.SeesPayload(), tc.want, tc.payload)
			}
		})
	}
}
