// Command noisetable prints one row of the noise experiment's table (scripts/noise.sh)
// from `warmstat compare --method paired-t --format json` on stdin: for the Product
// mean, the load wall-clock and goLive, the between-run variation and the within-pair
// noise (one run's, once its pair partner is known), and the mean run wall time given
// as the second argument.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/warmstat/warmstat/report"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: warmstat compare --method paired-t --format json A B | noisetable SETTING RUN_SECONDS")
		os.Exit(2)
	}
	r, err := row(os.Stdin, os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "noisetable:", err)
		os.Exit(1)
	}
	fmt.Println(r)
}

// row is the table row of the compare document read from in.
func row(in io.Reader, setting, seconds string) (string, error) {
	var c report.CompareJSON
	if err := json.NewDecoder(in).Decode(&c); err != nil {
		return "", fmt.Errorf("stdin is not a compare document: %w", err)
	}
	out := fmt.Sprintf("| %s | %d |", setting, len(c.Pairs))
	for _, want := range [][2]string{{c.Dominant, "mean"}, {"*", "load_wall"}, {"*", "golive"}} {
		cell := " — | — |"
		for _, r := range c.Rows {
			if r.Collection == want[0] && string(r.Metric) == want[1] && r.CVPct != nil && r.PairCVPct != nil {
				cell = fmt.Sprintf(" %.2f | %.2f |", *r.CVPct, *r.PairCVPct)
			}
		}
		out += cell
	}
	return out + " " + seconds + " | " + perHour(c, seconds) + " |", nil
}

// perHour is the 95 % half-width of the dominant collection's mean change that one
// machine-hour of pairs buys at the within-pair noise seen: 1.96 · √2 · noise / √(pairs
// per hour), a pair's machine time being two runs' (a duet's two runs share one wall,
// so the script gives half a duet's wall per run). "—" when unknown.
func perHour(c report.CompareJSON, runSeconds string) string {
	var secs float64
	if _, err := fmt.Sscan(runSeconds, &secs); err != nil || secs <= 0 {
		return "—"
	}
	for _, r := range c.Rows {
		if r.Collection == c.Dominant && r.Metric == "mean" && r.PairCVPct != nil {
			perHour := 3600 / (2 * secs)
			return fmt.Sprintf("%.2f", 1.96*math.Sqrt2**r.PairCVPct/math.Sqrt(perHour))
		}
	}
	return "—"
}
