package spend_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/account"
)

// BenchmarkAdmitSettleOneKey: 64 concurrent requests of one key with a
// budget and rpm and tpm limits, each admitted and settled.
func BenchmarkAdmitSettleOneKey(b *testing.B) {
	g, _ := newGuardAt(b, time.Now)
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Limits: account.KeyLimits{
		MaxBudget: 1 << 50, Period: account.PeriodMonth, RPM: 1 << 40, TPM: 1 << 50}}
	ctx := context.Background()
	b.ResetTimer()
	var wg sync.WaitGroup
	work := make(chan struct{})
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				settle, err := g.Admit(ctx, caller, nil, 0.001, 100)
				if err != nil {
					b.Error(err)
					return
				}
				settle(ctx, 0.0005, 50)
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
}
