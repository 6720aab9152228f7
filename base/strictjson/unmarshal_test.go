package strictjson

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type state struct {
	Schema string           `json:"schema"`
	At     time.Time        `json:"at"`
	Counts map[string]int64 `json:"counts"`
	Runs   []struct {
		Side string `json:"side"`
	} `json:"runs"`
}

const valid = `{
  "schema": "x/v1",
  "at": "2026-05-01T10:00:00Z",
  "counts": {"Product": 3},
  "runs": [{"side": "A"}]
}
`

// One value and nothing but white space after it reads, types with JSON methods of
// their own and maps included; everything else is refused with the file, the line and,
// where there is one, the field.
func TestUnmarshalRefusesAllButOneKnownValue(t *testing.T) {
	var s state
	if err := Unmarshal("s.json", []byte(valid+"\n \t\r\n"), &s); err != nil || s.Counts["Product"] != 3 || s.At.Year() != 2026 || s.Runs[0].Side != "A" {
		t.Fatalf("the valid file: %v %+v", err, s)
	}
	for _, c := range []struct {
		name, data string
		line       int
		field, msg string
	}{
		{"NUL and garbage", valid + "\x00{garbage", 7, "", `data after the JSON value, at byte 110 ("\x00{garbage"): a second value, or a damaged file`},
		{"a second value", valid + valid, 7, "", `data after the JSON value, at byte 110 ("{\n  \"schema\": \"x" ...): a second value, or a damaged file`},
		{"a closing brace too many", valid + "}", 7, "", `data after the JSON value, at byte 110 ("}"): a second value, or a damaged file`},
		{"cut", valid[:40], 3, "", "truncated JSON: the file ends inside its value"},
		{"empty", " \n", 0, "", "empty: no JSON value"},
		{"unknown field", `{"schema": "x/v1",` + "\n" + `"runs": [{"sid": "A"}]}`, 2, "sid", "unknown field (typo, or a newer schema?)"},
		{"wrong type", `{"schema": "x/v1",` + "\n" + `"counts": {"Product": "3"}}`, 2, "counts", "expected int64, got JSON string"},
		{"syntax", `{"schema": "x/v1",,}`, 1, "", "invalid JSON: invalid character ',' looking for beginning of object key string"},
	} {
		err := Unmarshal("s.json", []byte(c.data), &state{})
		var se *Error
		if !errors.As(err, &se) || se.File != "s.json" || se.Line != c.line || se.Field != c.field || se.Msg != c.msg {
			t.Errorf("%s: %#v, want line %d field %q %q", c.name, err, c.line, c.field, c.msg)
		}
	}
}

// ReadFile: no file is no error (and not found); a file is read by Unmarshal's rule,
// its path named.
func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if found, err := ReadFile(path, &state{}); found || err != nil {
		t.Fatalf("no file: %v %v", found, err)
	}
	os.WriteFile(path, []byte(valid+"\x00"), 0o644)
	found, err := ReadFile(path, &state{})
	var se *Error
	if !found || !errors.As(err, &se) || se.File != path || se.Line != 7 {
		t.Fatalf("a damaged file: %v %v", found, err)
	}
}
