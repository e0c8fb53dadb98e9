package main

import (
	"strings"
	"testing"
)

// TestMissingExtensionsNamesThePackage: a server without PostGIS is told
// which Debian package of its major version holds it.
func TestMissingExtensionsNamesThePackage(t *testing.T) {
	if err := missingExtensions(15, nil); err != nil {
		t.Fatalf("nothing missing: %v", err)
	}
	err := missingExtensions(16, []string{"postgis"})
	if err == nil || !strings.Contains(err.Error(), "lacks the postgis extension") || !strings.Contains(err.Error(), "apt-get install postgresql-16-postgis-3;") {
		t.Fatalf("postgis missing on 16: %v", err)
	}
	err = missingExtensions(15, []string{"postgis", "pg_trgm"})
	if err == nil || !strings.Contains(err.Error(), "postgis and pg_trgm") || !strings.Contains(err.Error(), "postgresql-15-postgis-3 postgresql-contrib") {
		t.Fatalf("both missing: %v", err)
	}
}
