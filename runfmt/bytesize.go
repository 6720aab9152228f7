package runfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a memory size the way people and JVMs write it: "23g", "14336m",
// "512k", "14.0 GiB", "14,0 GiB" (a JVM in a comma-decimal locale), "8 GB", or a plain
// byte count. Units are binary (k = 1024) as in -Xmx; "GB" is read as GiB because
// that is what the JVM and evitaDB mean by it.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == ',') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q has no number", s)
	}
	if strings.Count(num, ",")+strings.Count(num, ".") > 1 {
		return 0, fmt.Errorf("size %q: more than one decimal separator", s)
	}
	f, err := strconv.ParseFloat(strings.Replace(num, ",", ".", 1), 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	var mult float64
	switch unit {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use k, m, g, t, KiB, MiB, GiB, TiB)", s, t[i:])
	}
	v := math.Round(f * mult)
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

// FormatBytes renders a byte count for people: "23g" when it is a whole number of
// GiB (the way heaps are passed), otherwise "14.3 GiB"; nil is "unknown".
func FormatBytes(b *int64) string {
	if b == nil {
		return "unknown"
	}
	v := *b
	switch {
	case v >= 1<<30 && v%(1<<30) == 0:
		return fmt.Sprintf("%dg", v>>30)
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(v)/(1<<30))
	case v >= 1<<20 && v%(1<<20) == 0:
		return fmt.Sprintf("%dm", v>>20)
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20))
	}
	return fmt.Sprintf("%d B", v)
}
