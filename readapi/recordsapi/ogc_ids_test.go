package recordsapi

import (
	"net/url"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/projections/parcels"
)

// FuzzFeatureID: every APN's feature id is made of unreserved URL
// characters only and reads back to the same key, as it is and after a
// client percent-encodes and the server decodes it; an id is read back
// only from how featureID writes it.
func FuzzFeatureID(f *testing.F) {
	for _, s := range []string{"\x00", "A\xffB", "0001 003", "4049B 120O", "12-34/56", "A_B~C%20", "474128011070", "ÄÖ 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, apn string) {
		if apn == "" {
			return
		}
		k := parcels.ParcelKey{County: "24510", APN: apn}
		id := featureID(k)
		if !text.Valid(apn) {
			// No APN of the read model is so (the text rule); its id
			// names no feature, and never reaches PostgreSQL.
			if got, err := featureKey("parcels", id); err == nil {
				t.Fatalf("featureKey(%q) = %+v: an APN that fails the text rule", id, got)
			}
			return
		}
		if strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~") != "" {
			t.Fatalf("featureID(%q) = %q holds reserved characters", apn, id)
		}
		dec, err := url.PathUnescape(url.PathEscape(id))
		if err != nil || dec != id {
			t.Fatalf("%q does not survive percent-encoding: %q %v", id, dec, err)
		}
		got, err := featureKey("parcels", id)
		if err != nil || got != k {
			t.Fatalf("featureKey(%q) = %+v, %v; want %+v", id, got, err, k)
		}
		// The id read back is written the same: one id per feature.
		if featureID(got) != id {
			t.Fatalf("%q reads back as %+v, written %q", id, got, featureID(got))
		}
	})
}

// TestFeatureKeyRefuses: an id featureID does not write, or one that
// decodes to a NUL, a control character or invalid UTF-8 (which
// PostgreSQL refuses in text), is not found.
func TestFeatureKeyRefuses(t *testing.T) {
	for _, id := range []string{"", "24510", "2451-0001", "24510-", "abcde-1", "24510-a b", "24510-~2f", "24510-~41", "24510-~20", "24510-~2", "24510-a/b",
		"24510-~00", "24510-A~00B", "24510-~FF", "24510-~C3~28", "24510-~1B", "24510-~7F"} {
		if k, err := featureKey("parcels", id); err == nil {
			t.Errorf("featureKey(%q) = %+v, want not found", id, k)
		}
	}
}
