package records

import (
	"sort"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// Layer is the key of a data layer: a kind of public record that names
// parcels (a vacant-building notice, a tax-sale certificate, ...).
type Layer string

// The layers arr knows. Keys are part of the API: never renamed.
const (
	Vacant             Layer = "vacant"
	TaxSale            Layer = "tax_sale"
	TaxDelinquent      Layer = "tax_delinquent"
	CodeViolation      Layer = "code_violation"
	ForeclosureAuction Layer = "foreclosure_auction"
	LisPendens         Layer = "lis_pendens"
)

// LayerInfo says what a layer means and how often its sources change.
type LayerInfo struct {
	Key     Layer  `json:"key"`
	Title   string `json:"title"`
	Meaning string `json:"meaning"`
	// Cadence is how often the public source publishes (and arr should
	// reload) the layer.
	Cadence string `json:"cadence"`
}

// Layers returns every layer, in a stable order.
func Layers() []LayerInfo {
	return []LayerInfo{
		{Vacant, "Vacant building", "The city has a vacant building notice open on the parcel.", "monthly"},
		{TaxSale, "Tax sale certificate", "The parcel was offered at the annual tax sale for unpaid taxes (a lien certificate).", "yearly (the sale's list), updated through the sale"},
		{TaxDelinquent, "Delinquent taxes", "The tax collector lists unpaid real-estate taxes on the parcel.", "monthly"},
		{CodeViolation, "Code violation", "A code-enforcement incident (lot cleaning, zoning, unsafe structure, ...) is recorded on the parcel.", "weekly"},
		{ForeclosureAuction, "Foreclosure auction", "The parcel is scheduled for (or was offered at) a court foreclosure auction.", "daily"},
		{LisPendens, "Lis pendens", "A lis pendens (notice of a pending lawsuit, usually a foreclosure) was recorded against the parcel.", "daily"},
	}
}

// Info returns the layer's description and whether the key is known.
func (l Layer) Info() (LayerInfo, bool) {
	for _, i := range Layers() {
		if i.Key == l {
			return i, true
		}
	}
	return LayerInfo{}, false
}

// LayerKeys returns the valid keys, sorted.
func LayerKeys() []string {
	var out []string
	for _, i := range Layers() {
		out = append(out, string(i.Key))
	}
	sort.Strings(out)
	return out
}

// ParseLayer checks one key.
func ParseLayer(s string) (Layer, error) {
	if err := domain.Verbatim("layer", s); err != nil {
		return "", err
	}
	l := Layer(s)
	if _, ok := l.Info(); !ok {
		return "", domain.Invalid("unknown_layer", "layer", "unknown layer %q; valid layer keys are %s", s, strings.Join(LayerKeys(), ", "))
	}
	return l, nil
}

// ParseLayers reads a comma-separated list of layer keys (the layers query
// parameter). Empty input means every layer (nil). Duplicates are dropped.
func ParseLayers(s string) ([]Layer, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Layer
	seen := map[Layer]bool{}
	for _, p := range strings.Split(s, ",") {
		l := Layer(strings.TrimSpace(p))
		if _, ok := l.Info(); !ok {
			return nil, domain.Invalid("unknown_layer", "layers", "unknown layer %q; valid layer keys are %s", p, strings.Join(LayerKeys(), ", "))
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}
