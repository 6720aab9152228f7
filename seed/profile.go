// Package seed builds a deterministic, production-shaped synthetic catalog in a server.
// The shape is data (Profile), not code: one declarative description per collection,
// DefaultProfile documents where each number comes from, and a JSON file can replace it.
package seed

import (
	_ "embed"
	"math"
)

// ShapeV1 is the format of a measured shape (warmstat shape): a profile whose numbers
// were measured on a catalog. A hand-written profile may name it too, or leave it out.
const ShapeV1 = "warmstat.shape/v1"

// Profile describes a catalog at scale 1.
type Profile struct {
	// Note says what the profile is and where it comes from (free text).
	Note string `json:"note,omitempty"`
	// Format is ShapeV1 or absent (a hand-written profile); any other is refused.
	Format string `json:"format,omitempty"`
	// Measured says where a measured shape came from; absent in a hand-written profile.
	Measured    *Measured    `json:"measured,omitempty"`
	Locales     []string     `json:"locales"`
	Currencies  []string     `json:"currencies"`
	Collections []Collection `json:"collections"`
}

// Measured is where a measured shape came from: never a value of the catalog.
type Measured struct {
	Tool       string `json:"tool"`        // "warmstat shape"
	MeasuredAt string `json:"measured_at"` // RFC 3339
	From       string `json:"from"`        // the source's kind: workload, snapshot or server
	// Catalog is the source catalog's name ("catalog" when anonymised).
	Catalog       string `json:"catalog"`
	SourceVersion string `json:"source_version,omitempty"`
	Entities      int64  `json:"entities"` // measured, all collections
	// Scale is the source's own scale: 1 for a real catalog, a seeded one's --scale
	// (its snapshot records it). Counts are divided by it, so that a shape of the
	// scale-0.1 catalog regenerates at --scale 0.1 to its source's size; seed --shape
	// uses it when no --scale is given.
	Scale float64 `json:"scale"`
	// LiveHeapBytes is the source catalog's live heap when it was measured (a seeded
	// snapshot records it): a catalog generated from the shape is estimated along the
	// built-in catalog's curve through this point, not at the built-in cost per entity.
	LiveHeapBytes *int64 `json:"live_heap_bytes,omitempty"`
	Anonymised    bool   `json:"anonymised,omitempty"`
	// NotKept lists what the source's schema has and this vocabulary cannot say
	// (sortable compounds, representative attributes, ...): the generated catalog lacks it.
	NotKept []string `json:"not_kept,omitempty"`
}

// QuantileLevels are the probabilities of a Dist's Q, in order.
var QuantileLevels = []float64{0, 0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.975, 0.99, 0.995, 0.999, 1}

// Dist is a measured distribution of a count or size: N observations, their mean and
// standard deviation, and the value at each of QuantileLevels (Q[0] the least,
// Q[len-1] the largest).
type Dist struct {
	N    int64     `json:"n"`
	Mean float64   `json:"mean"`
	SD   float64   `json:"sd"`
	Q    []float64 `json:"q"`
}

// FanIn is how many entities point at one target of a reference: over the Referenced
// targets (Dist), with the Top few largest and Targets, the target collection's size
// (0 when the target is not a collection of the catalog).
type FanIn struct {
	Targets    int64   `json:"targets"`
	Referenced int64   `json:"referenced"`
	Dist       Dist    `json:"dist"`
	Top        []int64 `json:"top"` // the largest fan-ins, descending (at most 10)
	// TailAlpha is the Pareto index fitted to the largest fan-ins (Hill's estimator
	// over the top max(10, 1 %) of the referenced targets): the share of targets with
	// a fan-in above x falls as x^-alpha there, so the lower, the heavier the tail
	// (Zipf's law over ranks with exponent s gives alpha = 1/s). 0 when fewer than 20
	// targets were referenced.
	TailAlpha float64 `json:"tail_alpha,omitempty"`
}

// Collection is one entity collection.
type Collection struct {
	Name      string `json:"name"`
	Count     int    `json:"count"` // entities at scale 1
	Source    string `json:"source,omitempty"`
	Note      string `json:"note,omitempty"` // why its numbers are what they are
	Hierarchy bool   `json:"hierarchy,omitempty"`
	// MeasuredOn is how many entities a measured shape's distributions were taken on.
	MeasuredOn int64 `json:"measured_on,omitempty"`
	// LocalesPerEntity: how many locales an entity's localized data uses (measured).
	LocalesPerEntity *Dist `json:"locales_per_entity,omitempty"`
	// HierarchyDepth (a root is 0) and HierarchyChildren (children per entity), measured.
	HierarchyDepth    *Dist `json:"hierarchy_depth,omitempty"`
	HierarchyChildren *Dist `json:"hierarchy_children,omitempty"`
	// Entangled is what this collection's references cost the entities they point at,
	// measured in load order (descriptive: the generator does not read it).
	Entangled      *Entangled       `json:"entangled,omitempty"`
	Attributes     []Attribute      `json:"attributes"`
	AssociatedData []AssociatedData `json:"associated_data,omitempty"`
	Prices         *Prices          `json:"prices,omitempty"`
	References     []Reference      `json:"references,omitempty"`
}

// Entangled counts the size-dependent work a collection's references cause on the
// entities they point at. A reference whose target holds its reflected counterpart
// makes the engine apply a mutation to that target (an application), and each
// application checks the target's whole reference container, which holds one
// back-reference per entity already pointing at it. So the work grows with the
// catalog: ScannedPerEntity is applications × back-references met, per entity of the
// collection, taken in load order at the measured catalog's own scale. evitaDB counted
// the same two figures on a production catalog (issue #1531: 16.7 applications per
// fact entity, 734.8 references scanned per application, at 20,000 facts).
type Entangled struct {
	// ApplicationsPerEntity: references per entity whose target holds the reflected side.
	ApplicationsPerEntity float64 `json:"applications_per_entity"`
	// ScannedPerApplication: back-references the target held when the reference arrived.
	ScannedPerApplication float64 `json:"scanned_per_application"`
	ScannedPerEntity      float64 `json:"scanned_per_entity"`
}

// Attribute kinds: string, text (long, not indexed), int, long, bool, decimal, datetime, range.
type Attribute struct {
	Name       string  `json:"name"`
	Kind       string  `json:"kind"`
	Localized  bool    `json:"localized,omitempty"`
	Filterable bool    `json:"filterable,omitempty"`
	Sortable   bool    `json:"sortable,omitempty"`
	Unique     bool    `json:"unique,omitempty"` // unique within the collection (per locale when localized)
	Global     bool    `json:"global,omitempty"` // the catalog's globally unique localized `url`
	Share      float64 `json:"share,omitempty"`  // fraction of entities carrying it (default 1)
	Length     int     `json:"length,omitempty"` // typical string length
	// Values, when given, are the only values of a string attribute (an enumeration,
	// e.g. a widget type), drawn with Weights (default: equally likely).
	Values  []string  `json:"values,omitempty"`
	Weights []float64 `json:"weights,omitempty"`
	// Measured: Absent (in the schema, never in the data), the value lengths (a
	// string's characters, another value's encoded bytes) and the number of distinct
	// values (estimated above a few thousand: HyperLogLog, within about 1 %).
	Absent   bool  `json:"absent,omitempty"`
	Lengths  *Dist `json:"lengths,omitempty"`
	Distinct int64 `json:"distinct,omitempty"`
}

// AssociatedData sizes are log-normal with the given median and 95th percentile.
type AssociatedData struct {
	Name        string `json:"name"`
	Localized   bool   `json:"localized,omitempty"`
	MedianBytes int    `json:"median_bytes"`
	P95Bytes    int    `json:"p95_bytes"`
	MaxBytes    int    `json:"max_bytes"`
	// Measured: the share of entities carrying it (0 = every one; Absent: none) and its
	// sizes.
	Absent bool    `json:"absent,omitempty"`
	Share  float64 `json:"share,omitempty"`
	Bytes  *Dist   `json:"bytes,omitempty"`
}

// Prices per entity: every price list in every currency.
type Prices struct {
	Note             string  `json:"note,omitempty"` // why they are what they are
	Mean             float64 `json:"mean"`           // prices per entity
	Max              int     `json:"max"`
	Lists            int     `json:"lists"` // pool of price lists; "basic" is always used
	IndexedShare     float64 `json:"indexed_share"`
	ValidityShare    float64 `json:"validity_share"`
	InnerRecordShare float64 `json:"inner_record_share"` // entities with LOWEST_PRICE and inner records
	// Measured: prices per entity carrying prices, and the share of entities with none.
	PerEntity *Dist   `json:"per_entity,omitempty"`
	NoneShare float64 `json:"none_share,omitempty"`
}

// Reference from every entity of the collection.
type Reference struct {
	Name        string  `json:"name"`
	Note        string  `json:"note,omitempty"` // why it is what it is
	Target      string  `json:"target"`         // a collection of the profile, or an unmanaged type
	Mean        float64 `json:"mean"`           // instances per entity
	Min         int     `json:"min,omitempty"`
	Max         int     `json:"max"`
	Cardinality string  `json:"cardinality,omitempty"` // zero-or-one, exactly-one, zero-or-more (default)
	Index       string  `json:"index,omitempty"`       // filtering | partitioning | "" (not indexed)
	Faceted     bool    `json:"faceted,omitempty"`
	Group       string  `json:"group,omitempty"`     // group collection
	Reflected   string  `json:"reflected,omitempty"` // name of the reflected reference on the target
	// ReflectedIndex overrides the reflected reference's index level: filtering,
	// partitioning or none ("" inherits the original's).
	ReflectedIndex string      `json:"reflected_index,omitempty"`
	Zipf           float64     `json:"zipf,omitempty"` // target popularity skew (0 = uniform)
	Attributes     []Attribute `json:"attributes,omitempty"`
	// FacetedPartially is a conditional-facet expression in evitaDB's expression language:
	// only the references for which it holds are facets.
	FacetedPartially string     `json:"faceted_partially,omitempty"`
	Histogram        *Histogram `json:"histogram,omitempty"`
	// Measured: references per entity (every entity of the collection, none counted as
	// 0), the fan-in of its targets, and the share of references with a group.
	PerEntity    *Dist   `json:"per_entity,omitempty"`
	FanIn        *FanIn  `json:"fan_in,omitempty"`
	GroupedShare float64 `json:"grouped_share,omitempty"`
}

// Histogram is a bucketed histogram over a reference (evitaDB's `bucketed`): Value
// computes each referenced entity's value, Partially (`bucketedPartially`) says which
// references take part. Both are expressions in evitaDB's expression language.
type Histogram struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Partially string `json:"partially,omitempty"`
}

// CountAt is a collection's size at a scale: linear (at least one entity). Lookup
// collections scale too: a product's share of every partition it joins (a category,
// a brand, a stock) must not depend on the scale, or the memory per entity would.
func (c Collection) CountAt(scale float64) int {
	return max(1, c.shareAt(scale))
}

// shareAt is the collection's production count × scale, rounded: its share of a
// catalog at that scale before CountAt's minimum of one.
func (c Collection) shareAt(scale float64) int { return int(math.Round(float64(c.Count) * scale)) }

// ClampedAt names the collections whose count at scale is raised to CountAt's minimum
// of one entity: below their share, so the catalog there no longer has the profile's
// proportions (at 0.0001, 12 of the default's 17 collections).
func (p *Profile) ClampedAt(scale float64) []string {
	var out []string
	for _, c := range p.Collections {
		if c.shareAt(scale) < 1 {
			out = append(out, c.Name)
		}
	}
	return out
}

// Disproportionate is ClampedAt when it names more than half of p's collections: a
// few small ones are always clamped at a small scale, but beyond that the catalog is no
// longer the profile's in proportion, which its user must hear.
func (p *Profile) Disproportionate(scale float64) []string {
	if cl := p.ClampedAt(scale); 2*len(cl) > len(p.Collections) {
		return cl
	}
	return nil
}

// OwnScale is the scale at which a measured shape regenerates its source at the
// source's own size (Measured.Scale); ok is false for a profile that was not measured.
func (p *Profile) OwnScale() (scale float64, ok bool) {
	if p.Measured == nil {
		return 0, false
	}
	return p.Measured.Scale, true
}

//go:embed shapes/default.json
var defaultShape []byte

// DefaultProfile is the built-in default, seed/shapes/default.json: one shape file
// among others, hand-written from shared/research/catalog-shape.md §5 (scale 1 =
// 386,369 entities), every collection's source and the notes saying where its numbers
// come from. It is read strictly like any shape; a test pins the catalog it generates.
func DefaultProfile() *Profile {
	p, err := parseProfile("seed/shapes/default.json", defaultShape)
	if err != nil {
		panic("seed: the built-in shape does not load: " + err.Error()) // a build with a broken embedded file; its tests fail first
	}
	return p
}
