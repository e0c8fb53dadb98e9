package parcels

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// The webhook types of a delivery's payload.
const (
	SignalAdded   = "parcel.signal_added"
	SignalRemoved = "parcel.signal_removed"
)

// The statuses of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = records.OutcomeDelivered
	DeliveryFailed    = records.OutcomeFailed
	DeliveryCancelled = "cancelled"
)

// watchDDL is the outbox of the list monitors: the rows of every imported
// list (their match keys only, never contact data), the monitors that
// watch lists, and the deliveries a completed load makes for them, with
// every attempt. It lives beside the layer records because a delivery is
// decided in the transaction that publishes a load, from what the parcel
// was named by before it: a crash loses none, and a rebuild makes the same
// deliveries, which the attempts recorded in the log mark as done.
const watchDDL = `
CREATE TABLE watch_rows (
    list_id      uuid    NOT NULL,
    row_no       integer NOT NULL,
    account_id   uuid    NOT NULL,
    apn_norm     text    COLLATE "C" NOT NULL,
    within       text    COLLATE "C" NOT NULL,
    street_key   text    COLLATE "C" NOT NULL,
    unit_key     text    COLLATE "C" NOT NULL,
    unit_conflict boolean NOT NULL,
    PRIMARY KEY (list_id, row_no)
);
CREATE TABLE watchers (
    monitor_id uuid    PRIMARY KEY,
    account_id uuid    NOT NULL,
    list_id    uuid    NOT NULL,
    layers     text[]  NOT NULL,
    active     boolean NOT NULL
);
CREATE TABLE deliveries (
    delivery_id     uuid        PRIMARY KEY,
    monitor_id      uuid        NOT NULL,
    account_id      uuid        NOT NULL,
    type            text        NOT NULL,
    layer           text        COLLATE "C" NOT NULL,
    county          text        COLLATE "C" NOT NULL,
    apn             text        COLLATE "C" NOT NULL,
    list_id         uuid        NOT NULL,
    row_no          integer     NOT NULL,
    payload         jsonb       NOT NULL,
    created_at      timestamptz NOT NULL,
    status          text        NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    position        bigint      NOT NULL
);
CREATE TABLE delivery_attempts (
    delivery_id  uuid        NOT NULL,
    attempt      integer     NOT NULL,
    monitor_id   uuid        NOT NULL,
    attempted_at timestamptz NOT NULL,
    status       integer     NOT NULL,
    error        text        NOT NULL,
    duration_ms  bigint      NOT NULL,
    outcome      text        NOT NULL,
    position     bigint      NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);
`

// watchDeferredDDL indexes the outbox: the dispatcher's due deliveries,
// a monitor's deliveries newest first, list rows by their match keys.
const watchDeferredDDL = `
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_monitor ON deliveries (monitor_id, created_at DESC, delivery_id);
CREATE INDEX delivery_attempts_monitor ON delivery_attempts (monitor_id, attempted_at);
CREATE INDEX watchers_list ON watchers (list_id) WHERE active;
`

// watchRow is a list row waiting to be copied into watch_rows.
type watchRow struct {
	list, account uuid.UUID
	records.ListRow
}

// copyWatchRows copies list rows' match keys into watch_rows.
func copyWatchRows(ctx context.Context, tx pgx.Tx, rows []watchRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"watch_rows"}, []string{"list_id", "row_no", "account_id", "apn_norm", "within", "street_key", "unit_key", "unit_conflict"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			k := r.MatchKeys()
			return []any{r.list, int32(r.Row), r.account, k.APN, k.Within, k.Street, k.Unit, k.UnitConflict}, nil
		}))
	if err != nil {
		return fmt.Errorf("copying list rows to the watch: %w", err)
	}
	return nil
}

// applyWatch applies one of the monitors' events (not list rows, which
// are copied in bulk) to the outbox.
func applyWatch(ctx context.Context, tx pgx.Tx, e projections.Event) error {
	pos := int64(e.Position)
	var err error
	switch v := e.Payload.(type) {
	case *records.MonitorCreated:
		_, err = tx.Exec(ctx, `INSERT INTO watchers (monitor_id, account_id, list_id, layers, active) VALUES ($1, $2, $3, $4, true)
			ON CONFLICT (monitor_id) DO NOTHING`, v.MonitorID, v.AccountID, v.ListID, v.Layers)
	case *records.MonitorDeleted:
		err = stopWatcher(ctx, tx, `monitor_id = $1`, v.MonitorID, pos)
	case *records.MonitorDisabled:
		err = stopWatcher(ctx, tx, `monitor_id = $1`, v.MonitorID, pos)
	case *records.ContactDataErased:
		// The account's data key sealed its monitors' secrets: without it
		// no delivery can be signed.
		err = stopWatcher(ctx, tx, `account_id = $1`, v.AccountID, pos)
	case *records.WebhookDeliveryAttempted:
		if v.ResearchJobID != nil {
			return nil // a research job's (projections/researchjobs)
		}
		err = recordAttempt(ctx, tx, v, pos)
	}
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Position, err)
	}
	return nil
}

// stopWatcher stops the watchers where (on $1) holds and cancels their
// pending deliveries.
func stopWatcher(ctx context.Context, tx pgx.Tx, where string, arg any, pos int64) error {
	if _, err := tx.Exec(ctx, `UPDATE watchers SET active = false WHERE active AND `+where, arg); err != nil {
		return fmt.Errorf("stopping a watcher: %w", err)
	}
	_, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, position = $2
		WHERE status = 'pending' AND `+where, arg, pos)
	if err != nil {
		return fmt.Errorf("cancelling deliveries: %w", err)
	}
	return nil
}

// recordAttempt records a delivery attempt and the delivery's new state.
func recordAttempt(ctx context.Context, tx pgx.Tx, v *records.WebhookDeliveryAttempted, pos int64) error {
	if _, err := tx.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, monitor_id, attempted_at, status, error, duration_ms, outcome, position)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
		v.DeliveryID, v.Attempt, v.MonitorID, v.AttemptedAt, v.Status, v.Error, v.DurationMS, v.Outcome, pos); err != nil {
		return fmt.Errorf("recording attempt %d of delivery %s: %w", v.Attempt, v.DeliveryID, err)
	}
	status := DeliveryPending
	if v.Outcome != records.OutcomeRetrying {
		status = v.Outcome
	}
	// A cancelled delivery stays cancelled (an attempt in flight when its
	// monitor stopped is recorded, not revived).
	_, err := tx.Exec(ctx, `UPDATE deliveries SET status = CASE WHEN status = 'cancelled' THEN status ELSE $2::text END,
		attempts = greatest(attempts, $3::integer), last_attempt_at = $4,
		next_attempt_at = CASE WHEN status = 'cancelled' THEN NULL ELSE $5::timestamptz END, position = $6 WHERE delivery_id = $1`,
		v.DeliveryID, status, v.Attempt, v.AttemptedAt, v.NextAttemptAt, pos)
	if err != nil {
		return fmt.Errorf("updating delivery %s: %w", v.DeliveryID, err)
	}
	return nil
}

// changesSQL finds the deliveries a completed load makes ($1 its layer,
// $2 its id): for each active watcher of the layer, each row of its list
// matched to a parcel (MatchSQL, the rule the list read model matches
// by: ambiguous rows are not matched), the load newly naming the parcel (load_parcels.was_named not
// true) or no longer naming it (load_dropped). The delivery's id is a hash
// of what makes it, so a rebuild makes the same ids.
func changesSQL() string {
	return `
SELECT md5(concat_ws('|', w.monitor_id, $2::uuid, m.county, m.apn, $1::text, r.list_id, r.row_no, c.type))::uuid,
       w.monitor_id, w.account_id, r.list_id, r.row_no, c.type, m.county, m.apn, p.address, p.signals::text,
       pl.source_url, to_char(pl.source_date, 'YYYY-MM-DD'), pl.first_seen
FROM watchers w
JOIN watch_rows r ON r.list_id = w.list_id
CROSS JOIN LATERAL (` + MatchSQL("parcels") + `
) m
CROSS JOIN LATERAL (
    SELECT 'parcel.signal_added' AS type
    WHERE EXISTS (SELECT 1 FROM load_parcels lp WHERE lp.county = m.county AND lp.apn = m.apn AND lp.was_named IS NOT TRUE)
    UNION ALL
    SELECT 'parcel.signal_removed'
    WHERE EXISTS (SELECT 1 FROM load_dropped d WHERE d.county = m.county AND d.apn = m.apn)
) c
JOIN parcels p ON p.county = m.county AND p.apn = m.apn
JOIN parcel_layers pl ON pl.county = m.county AND pl.apn = m.apn AND pl.layer = $1
WHERE w.active AND (cardinality(w.layers) = 0 OR $1 = ANY (w.layers)) AND m.n = 1 AND m.tier <> 4
ORDER BY w.monitor_id, r.list_id, r.row_no, c.type`
}

// Payload is a delivery's JSON body.
type Payload struct {
	Type      string      `json:"type"`
	Timestamp time.Time   `json:"timestamp"`
	Data      PayloadData `json:"data"`
}

// PayloadData is what a delivery tells of the change.
type PayloadData struct {
	ListID     uuid.UUID     `json:"list_id"`
	Row        int           `json:"row"`
	Parcel     PayloadParcel `json:"parcel"`
	Layer      string        `json:"layer"`
	SourceURL  string        `json:"source_url"`
	SourceDate string        `json:"source_date"`
	FirstSeen  time.Time     `json:"first_seen"`
	// Motivation is the parcel's motivation score after the load, with
	// the default weights as of the load's crawl date.
	Motivation float64 `json:"motivation"`
	// WeightsVersion is the weights version Motivation was computed with.
	WeightsVersion string `json:"weights_version"`
}

// PayloadParcel names the parcel.
type PayloadParcel struct {
	County  string `json:"county"`
	APN     string `json:"apn"`
	Address string `json:"address"`
}

// makeDeliveries adds to the outbox the deliveries a completed load makes,
// in the transaction that publishes it (after load_parcels, load_dropped
// and the parcels' signals are written). It costs one query when no
// active monitor watches the load's layer.
func makeDeliveries(ctx context.Context, tx pgx.Tx, v records.LayerLoadCompleted, pos int64) error {
	layer := string(v.Layer)
	var watched bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM watchers WHERE active AND (cardinality(layers) = 0 OR $1 = ANY (layers)))`,
		layer).Scan(&watched); err != nil {
		return fmt.Errorf("looking for monitors: %w", err)
	}
	if !watched {
		return nil
	}
	if _, err := tx.Exec(ctx, `CREATE INDEX ON load_parcels (county, apn); CREATE INDEX ON load_dropped (county, apn); ANALYZE load_parcels; ANALYZE load_dropped`); err != nil {
		return fmt.Errorf("indexing the load's changes: %w", err)
	}
	rows, err := tx.Query(ctx, changesSQL(), layer, v.LoadID)
	if err != nil {
		return fmt.Errorf("finding deliveries: %w", err)
	}
	type delivery struct {
		id, monitor, account, list uuid.UUID
		row                        int
		typ, county, apn, address  string
		signals                    string
		sourceURL, sourceDate      string
		firstSeen                  time.Time
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (delivery, error) {
		var d delivery
		err := r.Scan(&d.id, &d.monitor, &d.account, &d.list, &d.row, &d.typ, &d.county, &d.apn, &d.address, &d.signals,
			&d.sourceURL, &d.sourceDate, &d.firstSeen)
		return d, err
	})
	if err != nil {
		return fmt.Errorf("finding deliveries: %w", err)
	}
	weights, err := records.Weights("")
	if err != nil {
		return err
	}
	for _, d := range ds {
		score, err := signalsScore(d.signals, v.CrawledAt, weights)
		if err != nil {
			return fmt.Errorf("parcel %s %s: %w", d.county, d.apn, err)
		}
		body, err := json.Marshal(Payload{Type: d.typ, Timestamp: v.CompletedAt.UTC(), Data: PayloadData{
			ListID: d.list, Row: d.row, Parcel: PayloadParcel{County: d.county, APN: d.apn, Address: d.address},
			Layer: layer, SourceURL: d.sourceURL, SourceDate: d.sourceDate, FirstSeen: d.firstSeen.UTC(),
			Motivation: score.Total, WeightsVersion: score.WeightsVersion}})
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO deliveries (delivery_id, monitor_id, account_id, type, layer, county, apn, list_id, row_no,
				payload, created_at, status, next_attempt_at, position)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $11, $12) ON CONFLICT (delivery_id) DO NOTHING`,
			d.id, d.monitor, d.account, d.typ, layer, d.county, d.apn, d.list, d.row, body, v.CompletedAt, pos); err != nil {
			return fmt.Errorf("adding delivery %s: %w", d.id, err)
		}
	}
	return nil
}

// signalsScore is the motivation score of a parcel from its rendered
// signals (parcels.signals), as of asOf's day.
func signalsScore(signals string, asOf time.Time, w records.WeightTable) (records.Score, error) {
	var named []struct {
		Layer      records.Layer `json:"layer"`
		SourceDate string        `json:"source_date"`
		RecordDate *string       `json:"record_date"`
	}
	if err := json.Unmarshal([]byte(signals), &named); err != nil {
		return records.Score{}, fmt.Errorf("reading its signals: %w", err)
	}
	in := make([]records.ScoreInput, 0, len(named))
	for _, l := range named {
		d := l.SourceDate
		if l.RecordDate != nil {
			d = *l.RecordDate
		}
		day, err := time.Parse(time.DateOnly, d)
		if err != nil {
			return records.Score{}, fmt.Errorf("signal date %q: %w", d, err)
		}
		in = append(in, records.ScoreInput{Layer: l.Layer, Date: day})
	}
	return records.Motivation(in, asOf.UTC().Truncate(24*time.Hour), w), nil
}
