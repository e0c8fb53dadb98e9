package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/jackc/pgx/v5/pgxpool"
)

// messageDBFiles lists Message DB's SQL files in the order its install.sh
// runs them: schema, extension and table (hard-coded in install.sh), then
// whatever install-functions.sh, install-indexes.sh and install-views.sh
// run, read from those scripts. Roles and privileges are left out: the
// benchmark connects as the database owner.
func messageDBFiles(dir string) ([]string, error) {
	files := []string{"schema/message-store.sql", "extensions/pgcrypto.sql", "tables/messages.sql"}
	re := regexp.MustCompile(`run_psql_file \$base/(\S+\.sql)`)
	for _, script := range []string{"install-functions.sh", "install-indexes.sh", "install-views.sh"} {
		f, err := os.Open(filepath.Join(dir, script))
		if err != nil {
			return nil, fmt.Errorf("message db: %w (is the npm package installed?)", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				files = append(files, m[1])
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("message db: reading %s: %w", script, err)
		}
	}
	return files, nil
}

// installMessageDB runs Message DB's SQL files into the database at u and
// sets the database's search_path to message_store, as its clients expect.
func installMessageDB(ctx context.Context, dir, u, dbName string) error {
	files, err := messageDBFiles(dir)
	if err != nil {
		return err
	}
	pool, err := newPool(ctx, u, 1, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	for _, f := range files {
		sql, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return fmt.Errorf("message db: %w", err)
		}
		// With no arguments pgx uses the simple protocol, which runs a
		// multi-statement file as psql -f would.
		if _, err := pool.Exec(ctx, "SET search_path = message_store, public;\n"+string(sql)); err != nil {
			return fmt.Errorf("message db: running %s: %w", f, err)
		}
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s SET search_path = message_store, public", dbName)); err != nil {
		return fmt.Errorf("message db: setting search_path: %w", err)
	}
	return nil
}

// mdbSingle measures write_message at one concurrency, one connection per
// writer. With ownCategories each writer writes to its own category
// (bench<w>-0); otherwise to bench-<w>, streams of one category "bench".
func mdbSingle(ctx context.Context, cfg config, srv server, writers int, ownCategories bool) (sample, error) {
	db, err := srv.fresh(ctx, "mdb_bench")
	if err != nil {
		return sample{}, err
	}
	defer db.drop()
	u := db.url
	if err := installMessageDB(ctx, cfg.messageDB, u, db.name); err != nil {
		return sample{}, err
	}
	pool, err := newPool(ctx, u, writers, nil)
	if err != nil {
		return sample{}, err
	}
	defer pool.Close()
	if err := warmPool(ctx, pool, writers); err != nil {
		return sample{}, err
	}
	if err := srv.settle(ctx); err != nil {
		return sample{}, err
	}
	streams := make([]string, writers)
	for w := range streams {
		if ownCategories {
			streams[w] = fmt.Sprintf("bench%d-0", w)
		} else {
			streams[w] = fmt.Sprintf("bench-%d", w)
		}
	}
	md, _ := json.Marshal(benchMetadata)
	mdS := string(md)
	smp, err := drive(ctx, writers, cfg.warmup, cfg.duration, func(ctx context.Context, w, seq int) error {
		var pos int64
		err := pool.QueryRow(ctx, `SELECT write_message($1::varchar, $2::varchar, $3::varchar, $4::jsonb, $5::jsonb, $6::bigint)`,
			newID(cfg.idVersion).String(), streams[w], "BenchEvent", string(benchData(w, seq)), mdS, nil).Scan(&pos)
		return err
	})
	if err != nil {
		return smp, err
	}
	// Check that the calls wrote what they claimed.
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM message_store.messages`).Scan(&n); err != nil {
		return smp, fmt.Errorf("message db: counting messages: %w", err)
	}
	if n != smp.calls {
		return smp, fmt.Errorf("message db: %d write_message calls succeeded but %d messages are stored", smp.calls, n)
	}
	return smp, nil
}

// warmPool opens n connections up front so connecting is not measured.
func warmPool(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("opening connection %d: %w", i, err)
		}
		conns = append(conns, c)
	}
	return nil
}
