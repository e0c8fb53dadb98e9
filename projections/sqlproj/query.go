package sqlproj

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/projections"
)

// Result is what a query returned: its columns in order and each row's
// values as JSON (null, a number, a string, …), in the columns' order.
type Result struct {
	Columns []string
	Rows    [][]json.RawMessage
}

// Query is Stream with every row kept in a Result.
func (e *Engine) Query(ctx context.Context, name, sql string) (*Result, error) {
	res := &Result{}
	_, err := e.Stream(ctx, name, sql, 0, func(cols []string, vals []json.RawMessage) error {
		if res.Columns == nil {
			res.Columns = cols
		}
		res.Rows = append(res.Rows, vals)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Stream runs one SELECT (or VALUES, TABLE, WITH … SELECT) on projection
// name's read model, in a READ ONLY transaction of a session that logs in
// as the projection's role, with search_path its schema: it reads that schema and nothing else. It
// hands row each row as it arrives (its columns, the same slice every
// time, and its values), at most maxRows of them (0: all); truncated says
// the query had more, which PostgreSQL did not compute. A query that
// returns no rows calls row never.
func (e *Engine) Stream(ctx context.Context, name, sql string, maxRows int64, row func(cols []string, vals []json.RawMessage) error) (truncated bool, err error) {
	sql = strings.TrimRight(strings.TrimSpace(sql), "; \t\n")
	if sql == "" {
		return false, errors.New("an empty query")
	}
	if maxRows < 0 {
		return false, fmt.Errorf("a row cap of %d: use 0 for none or a positive number", maxRows)
	}
	var limit *int64
	if maxRows > 0 {
		l := maxRows + 1 // one more, to know whether there were more
		limit = &l
	}
	var exists bool
	if err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)
		AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $2)`, projections.Schema(name), e.Role(name)).Scan(&exists); err != nil {
		return false, fmt.Errorf("querying %s: %w", name, err)
	}
	if !exists {
		return false, fmt.Errorf("querying %s: no read model of it (is it a SQL projection that arr has set up?)", name)
	}
	err = e.asRole(ctx, e.Role(name), pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var cols []string
		var n int64
		return e.guard(name).call(ctx, tx, projections.Schema(name), queryFn, func(rows pgx.Rows) error {
			for rows.Next() {
				if n++; maxRows > 0 && n > maxRows {
					truncated = true
					return nil
				}
				var text string
				if err := rows.Scan(&text); err != nil {
					return err
				}
				c, vals, err := orderedObject(text)
				if err != nil {
					return fmt.Errorf("reading a row: %w", err)
				}
				if cols == nil {
					cols = c
				}
				if err := row(cols, vals); err != nil {
					return err
				}
			}
			return rows.Err()
		}, sql, limit)
	})
	if err != nil {
		return false, fmt.Errorf("querying %s: %w", name, err)
	}
	return truncated, nil
}

// orderedObject reads a JSON object's keys and values in order
// (row_to_json writes a row's columns in order, repeated names too).
func orderedObject(s string) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object: %q", s)
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	return keys, vals, nil
}

// Text is a value as a table or CSV shows it: a string without its quotes,
// null as "", anything else as its JSON.
func Text(v json.RawMessage) string {
	if string(v) == "null" {
		return ""
	}
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// Objects are the rows as JSON objects, columns in order (a repeated
// column name keeps its first value).
func (r *Result) Objects() []json.RawMessage {
	out := make([]json.RawMessage, len(r.Rows))
	for i, row := range r.Rows {
		var b strings.Builder
		b.WriteByte('{')
		var seen []string
		for j, c := range r.Columns {
			if slices.Contains(seen, c) {
				continue
			}
			seen = append(seen, c)
			if len(seen) > 1 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(c)
			b.Write(k)
			b.WriteByte(':')
			b.Write(row[j])
		}
		b.WriteByte('}')
		out[i] = json.RawMessage(b.String())
	}
	return out
}
