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
		return 0, fmt.Errorf("size %q: unknown unit %q (use k, m, g, t, or KiB, MiB, GiB, TiB; KB, MB, GB, TB and b are read as binary units too)", s, t[i:])
	}
	v := math.Round(f * mult)
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

// SizeError is a size a person gave that reads but cannot be a heap: Value as given,
// Msg why.
type SizeError struct{ Value, Msg string }

func (e *SizeError) Error() string { return e.Value + ": " + e.Msg }

// ParseHeapSize reads a heap (or a machine's memory) a person gave: positive, with its
// unit, and at least the 2 MiB a JVM takes. "1.5" means 1.5 GiB to a person and 1 byte
// to a parser, so a size without its unit is refused, never guessed. A size that does
// not read is ParseBytes' error; one that reads but cannot be a heap is a *SizeError.
func ParseHeapSize(s string) (int64, error) {
	raw := strings.TrimSpace(s)
	v, err := ParseBytes(raw)
	switch {
	case err != nil:
		return 0, err
	case v <= 0:
		return 0, &SizeError{s, "a size must be positive"}
	case strings.ContainsAny(raw[len(raw)-1:], "0123456789."):
		return 0, &SizeError{raw, "give the size with its unit (k, m, g or t: 1536m, 1.5g)"}
	case v < 2<<20:
		return 0, &SizeError{raw, "below 2m, the smallest heap a JVM takes"}
	}
	return v, nil
}

// FormatBytes renders a size in the one notation the heap flags take: "23g", "1.5g",
// "3.75g", "512m", "64k" (binary units, up to two decimals, trailing zeros dropped), so a
// printed heap reads back as the flag value it was and two heaps side by side never mix
// "1.2 GiB" with "1g". Rounded to the nearest hundredth of its unit (≤ 0.5 % off); nil is
// "unknown".
func FormatBytes(b *int64) string {
	if b == nil {
		return "unknown"
	}
	return formatBytes(*b, math.Round)
}

// FormatBytesExact is a size as a flag takes it, exactly: FormatBytes when that reads
// back as the same number of bytes ("1.25g", "1536m"), else the finest unit that does
// ("1048680.81k"), else the plain byte count. For the sizes someone set (a heap given or
// chosen, a memory limit) and for the comparability contract, where two different heaps
// must never print alike.
func FormatBytesExact(b *int64) string {
	if b == nil {
		return "unknown"
	}
	v := *b
	for _, u := range byteUnits {
		if v < u.size && -v < u.size {
			continue
		}
		s := formatIn(v, u, math.Round)
		if back, err := ParseBytes(s); err == nil && back == v {
			return s
		}
	}
	if v >= 0 && v < 1<<10 {
		return fmt.Sprintf("%d B", v)
	}
	return strconv.FormatInt(v, 10)
}

// FormatSize is the size of data (a file, a workload) for people: "717.7 KiB",
// "13.8 MiB", "700 B" — binary units named in full, one decimal. Not a flag's notation:
// nobody gives a file's size back to warmstat.
func FormatSize(v int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if v >= u.size {
			return fmt.Sprintf("%.1f %s", float64(v)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d B", v)
}

// FormatBytesAtLeast is FormatBytes rounded up, for a size someone must give at least
// ("give --heap 1.24g or more"): the printed value is never below v.
func FormatBytesAtLeast(v int64) string { return formatBytes(v, math.Ceil) }

// byteUnit is a binary unit of a flag's notation.
type byteUnit struct {
	size   int64
	suffix string
}

// byteUnits are the units of a flag's notation, largest first.
var byteUnits = []byteUnit{{1 << 40, "t"}, {1 << 30, "g"}, {1 << 20, "m"}, {1 << 10, "k"}}

func formatBytes(v int64, round func(float64) float64) string {
	for _, u := range byteUnits {
		if v >= u.size || -v >= u.size {
			return formatIn(v, u, round)
		}
	}
	return fmt.Sprintf("%d B", v)
}

// formatIn is v in unit u with up to two decimals, rounded by round.
func formatIn(v int64, u byteUnit, round func(float64) float64) string {
	n := strconv.FormatFloat(round(float64(v)/float64(u.size)*100)/100, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(n, "0"), ".") + u.suffix
}
