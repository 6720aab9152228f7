package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Unmarshal decodes data, which must hold exactly one JSON value, into v (a pointer):
// the rule every JSON file warmstat writes and reads back (a manifest, a series' or a
// bisect's state, a history's files, a snapshot's metadata) is read by. It refuses, as
// an *Error naming file and, where it can, the line and field:
//   - a field v does not have (a typo, or a file of a newer warmstat);
//   - a value of the wrong JSON type;
//   - anything but white space after the value: a second value, a NUL, garbage
//     (a file written over in part, or two writers' output in one file);
//   - a value that ends before it is whole (a truncated file), and an empty file.
//
// Unlike Decode it leaves the Go types their own JSON methods (time.Time, a type with
// UnmarshalJSON) and maps, so it reads any file encoding/json wrote.
func Unmarshal(file string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Locate(file, data, err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		at := int64(len(data) - len(rest))
		return &Error{File: file, Line: lineAt(data, at), Msg: fmt.Sprintf("data after the JSON value, at byte %d (%s): a second value, or a damaged file", at, describe(rest))}
	}
	return nil
}

// ReadFile reads the file at path and Unmarshals it into v; found is false, and err
// nil, when there is no file.
func ReadFile(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, Unmarshal(path, data, v)
}

// Locate turns an error of encoding/json about data (the contents of file) into an
// *Error with the file, the line and the field it is about.
func Locate(file string, data []byte, err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && se.Offset >= int64(len(data)) && len(bytes.TrimSpace(data)) > 0:
		return truncated(file, data) // json.Unmarshal's "unexpected end of JSON input"
	case errors.As(err, &se):
		return &Error{File: file, Line: lineAt(data, se.Offset), Msg: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return &Error{File: file, Line: lineAt(data, te.Offset), Field: field, Msg: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return truncated(file, data)
	case errors.Is(err, io.EOF):
		return &Error{File: file, Msg: "empty: no JSON value"}
	}
	// encoding/json reports an unknown field by its key alone, with no offset
	if k, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		k = strings.Trim(k, `"`)
		return &Error{File: file, Line: lineOfKey(data, k), Field: k, Msg: "unknown field (typo, or a newer schema?)"}
	}
	return &Error{File: file, Msg: err.Error()}
}

func truncated(file string, data []byte) *Error {
	return &Error{File: file, Line: lineAt(data, int64(len(data))), Msg: "truncated JSON: the file ends inside its value"}
}

// lineOfKey is the line of the first "key": in data (0 if absent).
func lineOfKey(data []byte, key string) int {
	quoted := []byte(`"` + key + `"`)
	for from := 0; ; {
		i := bytes.Index(data[from:], quoted)
		if i < 0 {
			return 0
		}
		at := from + i
		from = at + len(quoted)
		if rest := bytes.TrimLeft(data[from:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			return lineAt(data, int64(at))
		}
	}
}

// describe shows the start of unexpected bytes, quoted so that a NUL can be seen.
func describe(rest []byte) string {
	const show = 16
	if len(rest) > show {
		return fmt.Sprintf("%q ...", rest[:show])
	}
	return fmt.Sprintf("%q", rest)
}
