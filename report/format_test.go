package report

import "testing"

func TestNumberFormatting(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Int(386369), "386,369"}, {Int(999), "999"}, {Int(-1234567), "-1,234,567"}, {Int(0), "0"},
		{Fixed(1158.1, 1), "1,158.1"}, {Fixed(-0.04, 1), "0.0"}, {Fixed(-12.25, 1), "-12.2"}, {Fixed(1e6, 0), "1,000,000"},
		// Java rounding (half up on the exact decimal), so imported runs print what the harness printed
		{Seconds(1_158_050_000_000), "1,158.1 s"}, {Seconds(15_007_000_000), "15.0 s"}, {Seconds(49_999_999), "0.0 s"},
		{Micros(8_281_550), "8,281.6"}, {Micros(250), "0.3"},
		{MDEscape("a|b\\c\nd"), `a\|b\\c d`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if _, err := ParseFormat("xml", Text, JSON); err == nil {
		t.Error("unknown format accepted")
	}
}
