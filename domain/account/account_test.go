package account_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func created(t *testing.T) *account.Account {
	t.Helper()
	a := account.New(account.IDForEmail("a@example.com"))
	evs, err := a.Create("a@example.com", account.Free, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		a.Apply(e)
	}
	return a
}

func mint(t *testing.T, a *account.Account, s account.Service) (uuid.UUID, error) {
	t.Helper()
	sec, err := account.NewSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	evs, err := a.IssueKey(id, s, sec, "", now)
	for _, e := range evs {
		a.Apply(e)
	}
	return id, err
}

func TestCreateTwiceIsConflict(t *testing.T) {
	a := created(t)
	_, err := a.Create("a@example.com", account.Free, now)
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	if a.Version() != 0 {
		t.Fatalf("version = %d, want 0", a.Version())
	}
}

func TestActiveKeyLimits(t *testing.T) {
	tests := []struct {
		name    string
		service account.Service
		max     int
	}{
		{"records allows 5 (spec)", account.Records, 5},
		{"gateway allows 10", account.Gateway, 10},
		{"answer allows 10", account.Answer, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := created(t)
			var ids []uuid.UUID
			for i := 0; i < tc.max; i++ {
				id, err := mint(t, a, tc.service)
				if err != nil {
					t.Fatalf("key %d: %v", i+1, err)
				}
				ids = append(ids, id)
			}
			_, err := mint(t, a, tc.service)
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrConflict) || de.Code != "key_limit_reached" || !strings.Contains(de.Message, "revoke one") {
				t.Fatalf("key %d: %v, want a key_limit_reached conflict that says to revoke one", tc.max+1, err)
			}
			// Other services are counted separately.
			other := account.Answer
			if tc.service == account.Answer {
				other = account.Gateway
			}
			if _, err := mint(t, a, other); err != nil {
				t.Fatalf("a key of another service: %v", err)
			}
			// Revoking one frees a slot.
			evs, err := a.RevokeKey(ids[0], now)
			if err != nil || len(evs) != 1 {
				t.Fatalf("revoke: %v %v", evs, err)
			}
			a.Apply(evs[0])
			if _, err := mint(t, a, tc.service); err != nil {
				t.Fatalf("mint after revoke: %v", err)
			}
		})
	}
}

func TestRevoke(t *testing.T) {
	a := created(t)
	id, _ := mint(t, a, account.Records)
	evs, _ := a.RevokeKey(id, now)
	a.Apply(evs[0])
	again, err := a.RevokeKey(id, now)
	if err != nil || len(again) != 0 {
		t.Fatalf("second revoke = %v, %v; want no events, no error", again, err)
	}
	if _, err := a.RevokeKey(uuid.New(), now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("revoking an unknown key: %v, want ErrNotFound", err)
	}
}

func TestIssueKeyNeedsAccount(t *testing.T) {
	a := account.New(uuid.New())
	sec, _ := account.NewSecret(account.Gateway)
	if _, err := a.IssueKey(uuid.New(), account.Gateway, sec, "", now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("key for a missing account: %v, want ErrNotFound", err)
	}
}

func TestSecret(t *testing.T) {
	for _, s := range account.Services() {
		a, err := account.NewSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := account.NewSecret(s)
		if a.Plain == b.Plain {
			t.Fatalf("two secrets are equal")
		}
		if !strings.HasPrefix(a.Plain, s.KeyPrefix()) || len(a.Plain) != len(s.KeyPrefix())+43 {
			t.Fatalf("%s secret %q: wrong prefix or length", s, a.Plain[:10])
		}
		if a.Hash != account.HashSecret(a.Plain) || len(a.Hash) != 64 || strings.Contains(a.Hash, a.Plain) {
			t.Fatalf("hash is not the hex SHA-256 of the secret")
		}
		if got, ok := account.LooksLikeKey(a.Plain); !ok || got != s {
			t.Fatalf("LooksLikeKey(%s secret) = %v, %v", s, got, ok)
		}
		if _, ok := account.LooksLikeKey(a.Plain[:len(a.Plain)-1]); ok {
			t.Fatalf("a truncated key looks like a key")
		}
	}
	// Known vector: SHA-256("arr_gw_test").
	if got := account.HashSecret("arr_gw_test"); got != "f8390f96b2a236ac84fa9b34d46326142bb5804df67dc39daece4ec9010d3268" {
		t.Fatalf("HashSecret(arr_gw_test) = %s", got)
	}
}

func TestNormalizeEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"lowercases and trims", "  Alice@Example.COM ", "alice@example.com", true},
		{"empty", "", "", false},
		{"no at", "alice.example.com", "", false},
		{"no domain dot", "alice@localhost", "", false},
		{"display name", "Alice <alice@example.com>", "", false},
		{"too long", strings.Repeat("a", 250) + "@example.com", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := account.NormalizeEmail(tc.in)
			if tc.ok != (err == nil) || got != tc.want {
				t.Fatalf("NormalizeEmail(%q) = %q, %v", tc.in, got, err)
			}
			if err != nil && !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
		})
	}
	if account.IDForEmail("a@example.com") != account.IDForEmail("a@example.com") || account.IDForEmail("a@example.com") == account.IDForEmail("b@example.com") {
		t.Fatalf("IDForEmail is not a deterministic function of the address")
	}
}

func TestPlans(t *testing.T) {
	tests := []struct {
		in   string
		want account.Plan
		ok   bool
	}{
		{"", account.Free, true}, {"PRO", account.Pro, true}, {"enterprise", account.Enterprise, true}, {"gold", "", false},
	}
	for _, tc := range tests {
		got, err := account.ParsePlan(tc.in)
		if got != tc.want || tc.ok != (err == nil) {
			t.Errorf("ParsePlan(%q) = %q, %v", tc.in, got, err)
		}
	}
	if !account.Scale.AtLeast(account.Pro) || account.Starter.AtLeast(account.Pro) || account.Plan("gold").AtLeast(account.Free) {
		t.Fatalf("plan order is wrong")
	}
}
