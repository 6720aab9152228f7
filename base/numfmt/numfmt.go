// Package numfmt groups digits for people (386,369), for the packages that print figures
// (report) and those that word them into messages (analyze) alike.
package numfmt

import "strings"

// Group inserts thousands separators into a non-negative integer string.
func Group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	pre := len(digits) % 3
	if pre > 0 {
		b.WriteString(digits[:pre])
	}
	for i := pre; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}
