package loader

import "strings"

// ParseSubset reads a comma-separated list of collections (Config.Collections,
// ExtractConfig.Collections): names trimmed, empty ones dropped; nil for none, which
// means every collection. A name the source lacks is refused when the load starts.
func ParseSubset(list string) []string {
	var subset []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c != "" {
			subset = append(subset, c)
		}
	}
	return subset
}
