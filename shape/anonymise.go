package shape

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/warmstat/warmstat/seed"
)

// Anonymise renames a shape's names consistently — the catalog to "catalog", each
// collection to CollectionNN, each attribute name to attributeNN (one new name per old
// name wherever it is used: a global attribute stays one attribute), each reference to
// referenceNN, each associated data to dataNN — in its expressions and notes too, and
// marks it anonymised. Locales and currencies are kept: they decide collation and price
// indexes, and name no customer.
func Anonymise(p *seed.Profile) {
	collections, attributes, references, data := namer("Collection"), namer("attribute"), namer("reference"), namer("data")
	for _, c := range p.Collections {
		collections.add(c.Name)
	}
	for _, c := range p.Collections {
		for _, a := range c.Attributes {
			attributes.add(a.Name)
		}
		for _, d := range c.AssociatedData {
			data.add(d.Name)
		}
		for _, r := range c.References {
			references.add(r.Name)
			if r.Reflected != "" {
				references.add(r.Reflected)
			}
			for _, a := range r.Attributes {
				attributes.add(a.Name)
			}
			if r.Histogram != nil {
				attributes.add(r.Histogram.Name)
			}
		}
	}
	// one table for free text: a name used as two kinds of name keeps its first kind's
	all := map[string]string{}
	for _, n := range []*names{collections, attributes, references, data} {
		for old, nu := range n.to {
			if _, taken := all[old]; !taken {
				all[old] = nu
			}
		}
	}
	externals := namer("External") // entity types references point at outside the catalog
	for _, c := range p.Collections {
		for _, r := range c.References {
			if _, ok := collections.to[r.Target]; !ok {
				externals.add(r.Target)
			}
		}
	}
	text := func(s string) string {
		return identifier.ReplaceAllStringFunc(s, func(w string) string {
			if nu, ok := all[w]; ok {
				return nu
			}
			return w
		})
	}
	for i := range p.Collections {
		c := &p.Collections[i]
		c.Name = collections.to[c.Name]
		for k := range c.Attributes {
			c.Attributes[k].Name = attributes.to[c.Attributes[k].Name]
		}
		for k := range c.AssociatedData {
			c.AssociatedData[k].Name = data.to[c.AssociatedData[k].Name]
		}
		for k := range c.References {
			r := &c.References[k]
			r.Name = references.to[r.Name]
			if nu, ok := collections.to[r.Target]; ok {
				r.Target = nu
			} else {
				r.Target = externals.to[r.Target]
			}
			if r.Group != "" {
				r.Group = collections.to[r.Group]
			}
			if r.Reflected != "" {
				r.Reflected = references.to[r.Reflected]
			}
			for j := range r.Attributes {
				r.Attributes[j].Name = attributes.to[r.Attributes[j].Name]
			}
			r.FacetedPartially = text(r.FacetedPartially)
			if h := r.Histogram; h != nil {
				h.Name, h.Value, h.Partially = attributes.to[h.Name], text(h.Value), text(h.Partially)
			}
		}
	}
	if m := p.Measured; m != nil {
		m.Catalog, m.Anonymised = "catalog", true
		for i := range m.NotKept {
			// a type outside the catalog is named in backquotes: it gets an external name
			m.NotKept[i] = quoted.ReplaceAllStringFunc(text(m.NotKept[i]), func(q string) string {
				name := q[1 : len(q)-1]
				if _, ok := all[name]; ok || strings.HasPrefix(name, "Collection") {
					return q
				}
				externals.add(name)
				return "`" + externals.to[name] + "`"
			})
		}
	}
}

var (
	identifier = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	quoted     = regexp.MustCompile("`[A-Za-z][A-Za-z0-9]*`")
)

type names struct {
	prefix string
	to     map[string]string
}

func namer(prefix string) *names { return &names{prefix: prefix, to: map[string]string{}} }

func (n *names) add(name string) {
	if _, ok := n.to[name]; !ok {
		n.to[name] = fmt.Sprintf("%s%02d", n.prefix, len(n.to)+1)
	}
}
