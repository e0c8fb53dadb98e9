package parcels_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
)

type watchFixture struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *postgres.Store
	runner *projections.Runner
	dir    string
	loads  int
}

func newWatchFixture(t *testing.T) *watchFixture {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return &watchFixture{t: t, ctx: ctx, pool: pool, store: store, runner: runner, dir: t.TempDir()}
}

func (f *watchFixture) append(stream string, e domain.Event) uint64 {
	f.t.Helper()
	ne, err := eventstore.EncodeAll(commands.NewMetadata("test", ""), e)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.store.Append(f.ctx, stream, eventstore.Any(), ne...)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.LastPosition
}

func (f *watchFixture) wait(pos uint64) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, time.Minute)
	defer cancel()
	if err := f.runner.WaitFor(ctx, parcels.Name, pos); err != nil {
		f.t.Fatal(err)
	}
}

// load loads a vacant layer naming the given "apn,address" parcels of
// county 24510.
func (f *watchFixture) load(layer string, parcels ...string) uint64 {
	f.t.Helper()
	f.loads++
	csv := filepath.Join(f.dir, "load.csv")
	body := "apn,address,lat,lon,date\n"
	for i, p := range parcels {
		body += p + ",39.29" + strconv.Itoa(i) + ",-76.61,2026-05-01\n" // 39.290 to 39.299, then 39.2910
	}
	if err := os.WriteFile(csv, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
	src, err := layerfile.Open(csv, layerfile.Options{County: "24510"})
	if err != nil {
		f.t.Fatal(err)
	}
	defer src.Close()
	h, err := commands.NewLoadLayerHandler(f.store, time.Now)
	if err != nil {
		f.t.Fatal(err)
	}
	lr, err := h.Handle(f.ctx, commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{"24510"}, SourceURL: "https://example.org/" + layer,
		SourceDate: "2026-06-01", File: "load.csv"}, src)
	if err != nil {
		f.t.Fatal(err)
	}
	f.wait(lr.Position)
	return lr.Position
}

type outboxRow struct {
	id             uuid.UUID
	monitor        uuid.UUID
	typ, apn       string
	row            int
	status         string
	attempts       int
	nextAttemptSet bool
}

func (f *watchFixture) outbox() []outboxRow {
	f.t.Helper()
	rows, err := f.pool.Query(f.ctx, `SELECT delivery_id, monitor_id, type, apn, row_no, status, attempts, next_attempt_at IS NOT NULL
		FROM rm_parcels.deliveries ORDER BY position, monitor_id, row_no, type`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.id, &r.monitor, &r.typ, &r.apn, &r.row, &r.status, &r.attempts, &r.nextAttemptSet); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestWatchOutbox: a completed load adds a delivery for each row of a
// watched list whose matched parcel it newly names (or stops naming), for
// the monitors of that layer only; attempts recorded in the log update
// the delivery; a deleted monitor's pending deliveries are cancelled and
// it gets no more; a rebuild makes the same outbox, ids and states.
func TestWatchOutbox(t *testing.T) {
	f := newWatchFixture(t)
	account, list := uuid.New(), uuid.New()
	f.append(records.ListStreamID(list), &records.ListImported{ListID: list, AccountID: account, Name: "leads", Rows: 3,
		Columns: []string{"apn", "address"}, ImportedAt: time.Now().UTC()})
	f.append(records.ListStreamID(list), &records.ListRowsImported{ListID: list, AccountID: account, Rows: []records.ListRow{
		{Row: 1, LeadID: uuid.New(), APN: "0101-001", County: "24510"},
		{Row: 2, LeadID: uuid.New(), Address: "200 Oak Avenue"},
		{Row: 3, LeadID: uuid.New(), APN: "9999-999"},
	}})
	// A load before any monitor makes no delivery.
	f.load("vacant", "0303-003,300 ELM ST")
	if got := f.outbox(); len(got) != 0 {
		t.Fatalf("no monitor yet: %+v", got)
	}
	vacant, every, taxSale := uuid.New(), uuid.New(), uuid.New()
	for id, layers := range map[uuid.UUID][]string{vacant: {"vacant"}, every: {}, taxSale: {"tax_sale"}} {
		f.append(records.MonitorStreamID(id), &records.MonitorCreated{MonitorID: id, AccountID: account, ListID: list, URL: "https://example.com/h",
			Layers: layers, Secret: []byte("sealed"), CreatedAt: time.Now().UTC()})
	}
	f.load("vacant", "0101-001,100 MAIN ST", "0202-002,200 OAK AVE", "0303-003,300 ELM ST")
	got := f.outbox()
	if len(got) != 4 {
		t.Fatalf("first load: %+v (want rows 1 and 2 for the vacant and every-layer monitors)", got)
	}
	for _, d := range got {
		if d.monitor == taxSale || d.typ != parcels.SignalAdded || d.status != "pending" || !d.nextAttemptSet ||
			(d.row == 1) != (d.apn == "0101-001") || (d.row == 2) != (d.apn == "0202-002") {
			t.Fatalf("delivery %+v", d)
		}
	}
	// The same parcels named again: nothing new. One dropped: a removal.
	f.load("vacant", "0101-001,100 MAIN ST", "0202-002,200 OAK AVE")
	if n := len(f.outbox()); n != 4 {
		t.Fatalf("a load naming the same parcels added %d deliveries", n-4)
	}
	f.load("vacant", "0202-002,200 OAK AVE")
	got = f.outbox()
	if len(got) != 6 || got[4].typ != parcels.SignalRemoved || got[4].row != 1 || got[5].typ != parcels.SignalRemoved {
		t.Fatalf("after the drop: %+v", got)
	}
	// Another layer's load concerns the every-layer and tax_sale monitors.
	f.load("tax_sale", "0101-001,100 MAIN ST")
	got = f.outbox()
	if len(got) != 8 {
		t.Fatalf("after a tax_sale load: %+v", got)
	}

	// Attempts: a retry, then delivered.
	d := got[0]
	next := time.Now().Add(5 * time.Second).UTC()
	f.append(records.DeliveryStreamID(d.id), &records.WebhookDeliveryAttempted{DeliveryID: d.id, MonitorID: d.monitor, AccountID: account,
		Attempt: 1, AttemptedAt: time.Now().UTC(), Status: 500, Error: "answered 500", Outcome: records.OutcomeRetrying, NextAttemptAt: &next})
	f.wait(f.append(records.DeliveryStreamID(d.id), &records.WebhookDeliveryAttempted{DeliveryID: d.id, MonitorID: d.monitor, AccountID: account,
		Attempt: 2, AttemptedAt: time.Now().UTC(), Status: 200, Outcome: records.OutcomeDelivered}))
	ds, total, err := parcels.NewQueries(f.pool).Deliveries(f.ctx, d.monitor, "", 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, x := range ds {
		if x.ID == d.id {
			seen = true
			if x.Status != "delivered" || x.AttemptCount != 2 || len(x.Attempts) != 2 || x.Attempts[0].Status != 500 || x.NextAttemptAt != nil ||
				x.WebhookID != "msg_"+strings.ReplaceAll(d.id.String(), "-", "") {
				t.Fatalf("delivered: %+v", x)
			}
		}
	}
	if !seen || total != len(ds) {
		t.Fatalf("deliveries of %s: %d of %d, %v", d.monitor, len(ds), total, seen)
	}

	// Deleting the vacant monitor cancels its pending deliveries; its
	// layer's next change concerns only the every-layer monitor.
	f.wait(f.append(records.MonitorStreamID(vacant), &records.MonitorDeleted{MonitorID: vacant, AccountID: account, DeletedAt: time.Now().UTC()}))
	for _, x := range f.outbox() {
		if x.monitor == vacant && x.status == "pending" {
			t.Fatalf("a deleted monitor's delivery is pending: %+v", x)
		}
	}
	f.load("vacant", "0101-001,100 MAIN ST", "0202-002,200 OAK AVE")
	got = f.outbox()
	if len(got) != 9 || got[8].monitor != every || got[8].row != 1 {
		t.Fatalf("after the delete: %+v", got)
	}
	due, err := parcels.NewQueries(f.pool).DueDeliveries(f.ctx, time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range due {
		if x.MonitorID == vacant || x.ID == d.id {
			t.Fatalf("due: %+v", x)
		}
	}

	// A rebuild makes the same outbox.
	before := f.outbox()
	if err := f.runner.Rebuild(f.ctx, parcels.Name, nil); err != nil {
		t.Fatal(err)
	}
	after := f.outbox()
	if len(after) != len(before) {
		t.Fatalf("rebuild: %d deliveries, %d before", len(after), len(before))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("rebuild: delivery %d is %+v, was %+v", i, after[i], before[i])
		}
	}
}
