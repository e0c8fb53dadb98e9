package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// requiredExtensions are the PostgreSQL extensions arr's migrations create,
// with the Debian package that holds each (%d is the server's major
// version).
func requiredExtensions() [][2]string {
	return [][2]string{{"postgis", "postgresql-%d-postgis-3"}, {"pg_trgm", "postgresql-contrib"}}
}

// checkExtensions fails, naming the package to install, when the server
// can neither find nor already has an extension the migrations create: a
// PostgreSQL installed without PostGIS otherwise fails deep in the third
// migration with SQLSTATE 0A000.
func checkExtensions(ctx context.Context, pool *pgxpool.Pool) error {
	var version int
	if err := pool.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return fmt.Errorf("reading the server's version: %w", err)
	}
	var missing []string
	for _, e := range requiredExtensions() {
		var ok bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1)
			OR EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = $1)`, e[0]).Scan(&ok)
		if err != nil {
			return fmt.Errorf("looking for the %s extension: %w", e[0], err)
		}
		if !ok {
			missing = append(missing, e[0])
		}
	}
	return missingExtensions(version/10000, missing)
}

// missingExtensions is the error for the extensions missing on a server
// of major version major, naming the packages to install; nil for none.
func missingExtensions(major int, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	var pkgs []string
	for _, e := range requiredExtensions() {
		if slices.Contains(missing, e[0]) {
			pkgs = append(pkgs, strings.ReplaceAll(e[1], "%d", strconv.Itoa(major)))
		}
	}
	return fmt.Errorf("the PostgreSQL server (version %d) lacks the %s extension arr needs: install it on the database's machine "+
		"(Debian: apt-get install %s; ./scripts/up.sh and ./scripts/test.sh do that for a local server) and start arr again",
		major, strings.Join(missing, " and "), strings.Join(pkgs, " "))
}
