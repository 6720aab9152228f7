// Package seed builds a deterministic, production-shaped synthetic catalog in a server.
// The shape is data (Profile), not code: one declarative description per collection,
// DefaultProfile documents where each number comes from, and a JSON file can replace it.
package seed

import "math"

// ShapeV1 is the format of a measured shape (warmstat shape): a profile whose numbers
// were measured on a catalog. A hand-written profile may name it too, or leave it out.
const ShapeV1 = "warmstat.shape/v1"

// Profile describes a catalog at scale 1.
type Profile struct {
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
	Scale      float64 `json:"scale"`
	Anonymised bool    `json:"anonymised,omitempty"`
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
}

// Collection is one entity collection.
type Collection struct {
	Name      string `json:"name"`
	Count     int    `json:"count"` // entities at scale 1
	Source    string `json:"source,omitempty"`
	Hierarchy bool   `json:"hierarchy,omitempty"`
	// MeasuredOn is how many entities a measured shape's distributions were taken on.
	MeasuredOn int64 `json:"measured_on,omitempty"`
	// LocalesPerEntity: how many locales an entity's localized data uses (measured).
	LocalesPerEntity *Dist `json:"locales_per_entity,omitempty"`
	// HierarchyDepth (a root is 0) and HierarchyChildren (children per entity), measured.
	HierarchyDepth    *Dist            `json:"hierarchy_depth,omitempty"`
	HierarchyChildren *Dist            `json:"hierarchy_children,omitempty"`
	Attributes        []Attribute      `json:"attributes"`
	AssociatedData    []AssociatedData `json:"associated_data,omitempty"`
	Prices            *Prices          `json:"prices,omitempty"`
	References        []Reference      `json:"references,omitempty"`
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
	Mean             float64 `json:"mean"` // prices per entity
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
	Target      string  `json:"target"` // a collection of the profile, or an unmanaged type
	Mean        float64 `json:"mean"`   // instances per entity
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
	return max(1, int(math.Round(float64(c.Count)*scale)))
}

func text(n string) Attribute { return Attribute{Name: n, Kind: "string", Filterable: true} }

// enum is a filterable string with a few values (a status, a type): one inverted-index
// entry per value, not one per entity.
func enum(n string, values ...string) Attribute {
	return Attribute{Name: n, Kind: "string", Filterable: true, Values: values}
}
func flag(n string) Attribute { return Attribute{Name: n, Kind: "bool", Filterable: true} }
func code() Attribute         { return Attribute{Name: "code", Kind: "string", Unique: true, Length: 22} }
func url() Attribute          { return Attribute{Name: "url", Kind: "string", Localized: true, Global: true} }
func name(sort bool) Attribute {
	return Attribute{Name: "name", Kind: "string", Localized: true, Filterable: true, Sortable: sort}
}

// DefaultProfile is shared/research/catalog-shape.md §5 (scale 1 = 386,369 entities):
// Product's count and share are measured; the split of the other collections is that
// note's assumption (one ~180 k cheap bulk collection, one ~40 k mid one, many small ones).
func DefaultProfile() *Profile {
	changed := Attribute{Name: "changed", Kind: "datetime", Filterable: true, Sortable: true}
	published := Attribute{Name: "published", Kind: "datetime", Filterable: true}
	dims := func(n string, count int, src string, reflected bool) Collection {
		c := Collection{Name: n, Count: count, Source: src,
			Attributes:     []Attribute{code(), url(), name(true), {Name: "order", Kind: "int", Sortable: true}, enum("status", "ACTIVE", "HIDDEN", "ARCHIVED"), published, changed},
			AssociatedData: []AssociatedData{{Name: "texts", Localized: true, MedianBytes: 300, P95Bytes: 2000, MaxBytes: 8000}}}
		return c
	}
	category := dims("Category", 400, "assumption: 2022's 202 × product growth 1.84 (§5.1)", true)
	category.Hierarchy = true
	p := &Profile{Locales: []string{"cs", "en"}, Currencies: []string{"CZK", "EUR"}}
	p.Collections = []Collection{
		{Name: "AdjustedPricePolicy", Count: 3, Source: "2022 table (§5.1)", Attributes: []Attribute{code(), enum("kind", "PERCENT", "FIXED", "ROUNDING")}},
		dims("Brand", 300, "assumption: 2022's 158 × 1.84 (§5.1)", true),
		category,
		dims("Group", 2200, "assumption: 2022's 1,190 × 1.84 (§5.1)", false),
		{Name: "ObsoleteProduct", Count: 40000, Source: "assumption: the mid collection implied by #1531 (§5.1)",
			Attributes: []Attribute{code(), url(), name(false), published, enum("reason", "DISCONTINUED", "REPLACED", "SEASONAL", "RECALLED")},
			References: []Reference{{Name: "brand", Target: "Brand", Mean: 0.8, Max: 1, Cardinality: "zero-or-one", Index: "filtering"}}},
		{Name: "Parameter", Count: 256, Source: "assumption: ≈ 256 REFERENCED_GROUP_ENTITY partitions (§5.1)",
			Attributes: []Attribute{code(), name(true),
				{Name: "inputWidgetType", Kind: "string", Filterable: true, Values: []string{"CHECKBOX", "INTERVAL"}, Weights: []float64{0.8, 0.2}}, flag("isVisibleInFilter")},
			References: []Reference{{Name: "parameterGroup", Target: "ParameterGroup", Mean: 1, Min: 1, Max: 1, Cardinality: "exactly-one", Index: "filtering"}}},
		{Name: "ParameterGroup", Count: 20, Source: "assumption (demo dataset has 5) (§5.1)", Attributes: []Attribute{code(), name(true)}},
		{Name: "ParameterValue", Count: 28000, Source: "assumption: ≈ Parameter's 28–29 k partitions (§5.1)",
			Attributes: []Attribute{code(), name(true), {Name: "basicUnitValue", Kind: "decimal", Filterable: true}, {Name: "order", Kind: "int", Sortable: true}},
			References: []Reference{{Name: "parameter", Target: "Parameter", Mean: 1, Min: 1, Max: 1, Cardinality: "exactly-one", Index: "filtering"}}},
		{Name: "PaymentMethod", Count: 15, Source: "2022 table (§5.1)", Attributes: []Attribute{code(), name(false)}},
		{Name: "PickupPoint", Count: 10000, Source: "assumption: demo dataset 9,747 (§5.1)",
			Attributes: []Attribute{code(), name(false), {Name: "address", Kind: "string", Length: 60}, {Name: "gps", Kind: "string", Length: 24}}},
		{Name: "PriceList", Count: 140, Source: "assumption: 273 price super-indexes ≈ 137 lists × 2 currencies (§5.1)",
			Attributes: []Attribute{code(), name(false), {Name: "priority", Kind: "long", Sortable: true}, {Name: "validity", Kind: "range", Filterable: true, Share: 0.3}}},
		product(),
		{Name: "ProductBundle", Count: 2000, Source: "assumption: 'moderate amount of product sets' (§5.1)",
			Attributes: []Attribute{code(), url(), name(true), published},
			Prices:     &Prices{Mean: 8, Max: 30, Lists: 20, IndexedShare: 0.9, InnerRecordShare: 1},
			References: []Reference{{Name: "items", Target: "Product", Mean: 5, Min: 2, Max: 10, Index: "filtering"}}},
		{Name: "ShippingMethod", Count: 15, Source: "2022 table (§5.1)", Attributes: []Attribute{code(), name(false)}},
		{Name: "Stock", Count: 20, Source: "assumption: warehouses (§5.1)", Attributes: []Attribute{code(), name(false)}},
		{Name: "Tag", Count: 2000, Source: "assumption (§5.1)", Attributes: []Attribute{code(), name(false)}},
		{Name: "Voucher", Count: 182228, Source: "assumption: the remainder, the single ~200 k cheap collection implied by #1531 (§5.1)",
			Attributes: []Attribute{code(), {Name: "validity", Kind: "range", Filterable: true}, {Name: "discount", Kind: "decimal"}}},
	}
	return p
}

// product is §5.2: ~30 attribute values (2 unique, ~18 filterable, ~8 sortable, 2
// localized sortable), 6 associated data (2 localized, median 800 B, p95 6 KB), ~48
// prices in ~137 lists × 2 currencies, and ~40 reference instances (≈ 5 partitioned,
// ≈ 14 reflected back-reference updates per product).
func product() Collection {
	return Collection{Name: "Product", Count: 118772, Source: "measured: 118,772 of 386,369, ~89 % of load time (seed §6)",
		Attributes: []Attribute{
			code(), url(), name(true),
			{Name: "description", Kind: "text", Localized: true, Length: 900},
			{Name: "ean", Kind: "string", Unique: true, Length: 13},
			text("catalogNumber"), {Name: "ordering", Kind: "string", Sortable: true}, enum("productType", "BASIC", "SET", "VIRTUAL", "SERVICE"),
			enum("status", "ACTIVE", "HIDDEN", "ARCHIVED", "PREPARED"), enum("availability", "IN_STOCK", "ON_ORDER", "SOLD_OUT", "PRE_ORDER", "UNAVAILABLE"),
			{Name: "published", Kind: "datetime", Filterable: true, Sortable: true}, {Name: "changed", Kind: "datetime", Filterable: true, Sortable: true},
			{Name: "priority", Kind: "long", Sortable: true}, {Name: "rating", Kind: "decimal", Filterable: true, Sortable: true},
			{Name: "ratingVotes", Kind: "int", Filterable: true}, {Name: "orderedQuantity", Kind: "int", Sortable: true},
			{Name: "stepOrderQuantity", Kind: "int"}, flag("saleRestriction"), flag("isVisibleInDetail"), flag("isVisibleInFilter"),
			flag("flagNew"), flag("flagSale"), flag("flagTop"), {Name: "validity", Kind: "range", Filterable: true, Share: 0.3},
			{Name: "tech1", Kind: "string"}, {Name: "tech2", Kind: "string"}, {Name: "tech3", Kind: "string"}, {Name: "tech4", Kind: "int"},
			{Name: "tech5", Kind: "bool"}, {Name: "tech6", Kind: "string", Localized: true},
		},
		AssociatedData: []AssociatedData{
			{Name: "gallery", MedianBytes: 800, P95Bytes: 6000, MaxBytes: 40000}, {Name: "parameters", MedianBytes: 800, P95Bytes: 6000, MaxBytes: 40000},
			{Name: "variants", MedianBytes: 400, P95Bytes: 3000, MaxBytes: 20000}, {Name: "seo", MedianBytes: 300, P95Bytes: 1500, MaxBytes: 8000},
			{Name: "longDescription", Localized: true, MedianBytes: 800, P95Bytes: 6000, MaxBytes: 40000},
			{Name: "labels", Localized: true, MedianBytes: 200, P95Bytes: 1200, MaxBytes: 6000},
		},
		// ~48 prices in ~24 of 40 lists: a partition then holds ~80 (list, currency)
		// price indexes, production's census ~97 (283,002 over its partitions); drawing from
		// all 137 lists put ~270 into every partition, each a few KB of fixed cost
		Prices: &Prices{Mean: 48, Max: 250, Lists: 40, IndexedShare: 0.9, ValidityShare: 0.1, InnerRecordShare: 0.03},
		References: []Reference{
			// reflected back sides are indexed for filtering only (Category's ~83 k indexes
			// in production are one per product, not partitions holding copies), Brand's
			// not at all (production's small collections hold at most 2,439 indexes)
			{Name: "categories", Target: "Category", Mean: 1.6, Min: 1, Max: 3, Index: "partitioning", Faceted: true, Reflected: "products", ReflectedIndex: "filtering",
				Attributes: []Attribute{{Name: "categoryPriority", Kind: "long", Sortable: true}, {Name: "assignmentValidity", Kind: "range", Filterable: true, Share: 0.2}}},
			{Name: "brand", Target: "Brand", Mean: 0.9, Max: 1, Cardinality: "zero-or-one", Index: "partitioning", Faceted: true, Reflected: "products", ReflectedIndex: "none", Zipf: 1.1},
			{Name: "groups", Target: "Group", Mean: 1.2, Max: 4, Index: "partitioning", Faceted: true,
				Attributes: []Attribute{{Name: "orderInGroup", Kind: "int", Sortable: true}}},
			{Name: "stocks", Target: "Stock", Mean: 1.3, Min: 1, Max: 3, Index: "partitioning",
				Attributes: []Attribute{{Name: "quantityOnStock", Kind: "decimal", Filterable: true}}},
			// no conditional facets or bucketed histograms (evitaDB's facetedPartially / bucketed),
			// although production's schema has them: production's published WARM_UP profile of
			// 2026.2.2 names none of their frames among its hottest (its harness copied the schema,
			// and a later version of it warns that a copy without facetedPartially silently skips
			// the deferred re-evaluation path), while with them the seeded writer spent 15–21 % of
			// its samples re-evaluating them, which hid 2026.2.3's gains on the paths production
			// does pay for (docs/measuring.md, "How faithful is the workload"). A profile of one's
			// own can still declare them.
			{Name: "parameterValues", Target: "ParameterValue", Mean: 10, Max: 60, Index: "filtering", Faceted: true, Group: "Parameter",
				Reflected: "products", Zipf: 1.1, Attributes: []Attribute{{Name: "variant", Kind: "bool", Filterable: true}}},
			{Name: "tags", Target: "Tag", Mean: 2, Max: 5, Index: "filtering", Faceted: true},
			{Name: "relatedProducts", Target: "Product", Mean: 2, Max: 20, Index: "filtering", Zipf: 1.1},
			{Name: "media", Target: "Media", Mean: 1.4, Min: 1, Max: 3, Index: "filtering",
				Attributes: []Attribute{{Name: "mediaOrder", Kind: "int", Sortable: true}}},
			{Name: "pickupPoints", Target: "PickupPoint", Mean: 1, Max: 3, Index: "filtering"},
			{Name: "vouchers", Target: "Voucher", Mean: 0.5, Max: 2, Index: "filtering"},
		},
	}
}
