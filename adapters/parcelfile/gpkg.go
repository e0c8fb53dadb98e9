package parcelfile

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/arr-dev/arr/domain/records"
)

// GeoPackage writes an export as an OGC GeoPackage 1.3 file (a SQLite
// database, application_id GPKG) at a path: the gpkg_spatial_ref_sys
// table (with EPSG:4326), gpkg_contents, gpkg_geometry_columns and one
// feature table parcels (fid, geom as GeoPackage binary Point geometries
// in EPSG:4326, the columns of Columns: dates DATE, times DATETIME,
// booleans BOOLEAN). Parcels are inserted in transactions of at most
// gpkgBatch rows; Close records the extent in gpkg_contents and closes
// the file. The file never grows past its limit (ErrTooLarge).
type GeoPackage struct {
	db    *sql.DB
	conn  *sql.Conn
	tx    *sql.Tx
	ins   *sql.Stmt
	cols  []Column
	n     int
	args  []any
	ext   [4]float64 // min x, min y, max x, max y
	any   bool
	limit int64
}

// ErrTooLarge is the error of a GeoPackage that would pass its limit.
var ErrTooLarge = errors.New("the GeoPackage would pass its size limit")

// gpkgBatch is how many parcels one transaction inserts.
const gpkgBatch = 5000

// gpkgPageSize is the file's page size: its limit is counted in pages.
const gpkgPageSize = 4096

// NewGeoPackage creates the GeoPackage of an export with header h at path
// (which must not exist), at most maxBytes large.
func NewGeoPackage(ctx context.Context, path string, h records.ExportHeader, maxBytes int64) (g *GeoPackage, err error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rwc")
	if err != nil {
		return nil, fmt.Errorf("geopackage %s: %w", path, err)
	}
	g = &GeoPackage{db: db, cols: Columns(h), limit: maxBytes}
	defer func() {
		if err != nil {
			_ = g.release()
			err = fmt.Errorf("geopackage %s: %w", path, g.sizeError(err))
		}
	}()
	if g.conn, err = db.Conn(ctx); err != nil {
		return nil, err
	}
	// A file made to be sent once: no journal, no syncs; max_page_count
	// bounds its size on disk.
	pragmas := fmt.Sprintf(`PRAGMA page_size = %d; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
		PRAGMA application_id = 1196444487; PRAGMA user_version = 10300; PRAGMA max_page_count = %d;`,
		gpkgPageSize, max(16, maxBytes/gpkgPageSize))
	if _, err = g.conn.ExecContext(ctx, pragmas); err != nil {
		return nil, err
	}
	if _, err = g.conn.ExecContext(ctx, gpkgDDL+g.tableDDL()); err != nil {
		return nil, err
	}
	desc := "arr records export of county " + h.County + " at " + h.At.Format(rfc3339)
	if _, err = g.conn.ExecContext(ctx, `INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change, srs_id)
		VALUES ('parcels', 'features', 'parcels', ?, ?, 4326);
		INSERT INTO gpkg_geometry_columns VALUES ('parcels', 'geom', 'POINT', 4326, 0, 0)`, desc, h.At.UTC().Format(gpkgTime)); err != nil {
		return nil, err
	}
	return g, nil
}

// gpkgTime is GeoPackage's DATETIME format.
const gpkgTime = "2006-01-02T15:04:05.000Z"

// gpkgDDL is the GeoPackage's required tables (GeoPackage 1.3, clause
// 1.1.2 and 1.1.3), with the three spatial reference systems it must
// define.
const gpkgDDL = `
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
    organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT);
INSERT INTO gpkg_spatial_ref_sys VALUES
 ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
 ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
 ('WGS 84 geodetic', 4326, 'EPSG', 4326, 'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]',
  'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE,
    description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
    CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
    srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
    CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name), CONSTRAINT uk_gc_table_name UNIQUE (table_name),
    CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
    CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
`

// tableDDL is the feature table. Column names are the fixed names and
// layer keys of Columns (lower-case letters and underscores), quoted.
func (g *GeoPackage) tableDDL() string {
	var b strings.Builder
	b.WriteString(`CREATE TABLE parcels (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, geom POINT`)
	for _, c := range g.cols {
		fmt.Fprintf(&b, `, "%s" %s`, c.Name, gpkgType(c.Kind))
	}
	b.WriteString(`);`)
	return b.String()
}

func gpkgType(k Kind) string {
	switch k {
	case Real:
		return "REAL"
	case Bool:
		return "BOOLEAN"
	case Date:
		return "DATE"
	case DateTime:
		return "DATETIME"
	}
	return "TEXT"
}

// Write inserts one parcel.
func (g *GeoPackage) Write(p *records.ExportParcel) (err error) {
	ctx := context.Background()
	defer func() {
		if err != nil {
			err = fmt.Errorf("geopackage parcel %s: %w", p.APN, g.sizeError(err))
		}
	}()
	if g.tx == nil {
		if g.tx, err = g.conn.BeginTx(ctx, nil); err != nil {
			return err
		}
		if g.ins, err = g.tx.PrepareContext(ctx, g.insertSQL()); err != nil {
			return err
		}
	}
	g.args = g.args[:0]
	if p.Placed {
		g.args = append(g.args, gpkgPoint(p.Lon, p.Lat))
		g.extend(p.Lon, p.Lat)
	} else {
		g.args = append(g.args, nil)
	}
	for _, c := range g.cols {
		v, ok := c.value(p)
		g.args = append(g.args, gpkgValue(c.Kind, v, ok))
	}
	if _, err = g.ins.ExecContext(ctx, g.args...); err != nil {
		return err
	}
	if g.n++; g.n%gpkgBatch == 0 {
		return g.commit()
	}
	return nil
}

func (g *GeoPackage) insertSQL() string {
	q := strings.Repeat(", ?", len(g.cols))
	return `INSERT INTO parcels VALUES (NULL, ?` + q + `)`
}

func gpkgValue(k Kind, v cell, ok bool) any {
	if !ok {
		return nil
	}
	switch k {
	case Bool:
		if v.b {
			return int64(1)
		}
		return int64(0)
	case Real:
		return v.f
	case DateTime:
		return v.t.UTC().Format(gpkgTime)
	}
	return v.s
}

func (g *GeoPackage) extend(x, y float64) {
	if !g.any {
		g.ext, g.any = [4]float64{x, y, x, y}, true
		return
	}
	g.ext = [4]float64{min(g.ext[0], x), min(g.ext[1], y), max(g.ext[2], x), max(g.ext[3], y)}
}

// gpkgPoint is a point as a GeoPackage binary geometry (GeoPackage 1.3,
// clause 2.1.3): magic GP, version 0, flags (little-endian, no envelope:
// a point's envelope is itself), the SRS id 4326, then the point as
// little-endian WKB.
func gpkgPoint(x, y float64) []byte {
	b := make([]byte, 0, 29)
	b = append(b, 'G', 'P', 0, 0x01)
	b = binary.LittleEndian.AppendUint32(b, 4326)
	b = append(b, 0x01) // WKB little-endian
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

func (g *GeoPackage) commit() error {
	if g.tx == nil {
		return nil
	}
	_ = g.ins.Close()
	err := g.tx.Commit()
	g.tx, g.ins = nil, nil
	return err
}

// Close commits the last parcels, records the extent and closes the file.
func (g *GeoPackage) Close() (err error) {
	defer func() {
		if rerr := g.release(); err == nil {
			err = rerr
		}
		if err != nil {
			err = fmt.Errorf("geopackage: %w", g.sizeError(err))
		}
	}()
	if err := g.commit(); err != nil {
		return err
	}
	if g.any {
		if _, err := g.conn.ExecContext(context.Background(), `UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = 'parcels'`,
			g.ext[0], g.ext[1], g.ext[2], g.ext[3]); err != nil {
			return err
		}
	}
	return nil
}

// release rolls back what is open and closes the database.
func (g *GeoPackage) release() error {
	if g.tx != nil {
		_ = g.ins.Close()
		_ = g.tx.Rollback()
		g.tx = nil
	}
	if g.conn != nil {
		_ = g.conn.Close()
		g.conn = nil
	}
	if g.db == nil {
		return nil
	}
	err := g.db.Close()
	g.db = nil
	return err
}

// sizeError names the limit of a database that is full (SQLITE_FULL).
func (g *GeoPackage) sizeError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return fmt.Errorf("%w of %d bytes (%w)", ErrTooLarge, g.limit, err)
	}
	return err
}
