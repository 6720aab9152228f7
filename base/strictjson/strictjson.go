// Package strictjson is how warmstat reads every JSON file: one value, decoded strictly,
// every refusal with its file, line and field. Unmarshal (and ReadFile) is the rule for
// the files warmstat writes itself (a manifest, a series' state, a history's points):
// unknown fields, values of the wrong JSON type, data after the value and a truncated
// value are refused. Decode is that rule and more for a hand-editable file (a seed
// profile, a shape): it also refuses a field given twice and records the line of every
// field, so that a rule checked after decoding can still point at a line.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Error is a problem at a known place in a file. Its text is one line:
// file:line: field: message (the line, and the field, are left out when unknown).
type Error struct {
	File  string
	Line  int    // 1-based; 0 when unknown
	Field string // JSON path, e.g. collections[3].attributes[2].kind
	Msg   string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Field + ": " + e.Msg
}

// Lines maps a field's JSON path to the line its value starts on.
type Lines map[string]int

// At is the line of field, or of the nearest enclosing object that has one (a field
// that is missing is reported at its object).
func (l Lines) At(field string) int {
	for f := field; ; f = Parent(f) {
		if n := l[f]; n > 0 || f == "" {
			return n
		}
	}
}

// Decode checks data against v's Go type, then unmarshals it into v (a pointer). file
// names the data in errors.
func Decode(file string, data []byte, v any) (Lines, error) {
	lines := Lines{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walk(dec, data, reflect.TypeOf(v).Elem(), "", lines); err != nil {
		var se *Error
		if errors.As(err, &se) {
			se.File = file
			return lines, se
		}
		return lines, &Error{File: file, Line: lineAt(data, dec.InputOffset()), Msg: "invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return lines, &Error{File: file, Line: lineAt(data, dec.InputOffset()), Msg: "unexpected data after the document"}
	}
	if err := json.Unmarshal(data, v); err != nil { // the walk checked the types; this is a value out of range
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return lines, &Error{File: file, Line: lineAt(data, te.Offset), Field: te.Field, Msg: fmt.Sprintf("%s does not fit %s", te.Value, te.Type)}
		}
		return lines, &Error{File: file, Msg: err.Error()}
	}
	return lines, nil
}

// walk reads one JSON value of Go type t at path, recording the line of every value
// and refusing unknown fields and values of the wrong JSON type.
func walk(dec *json.Decoder, data []byte, t reflect.Type, path string, lines Lines) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	line := lineAt(data, dec.InputOffset())
	lines[path] = line
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(got string) error {
		return &Error{Line: line, Field: path, Msg: fmt.Sprintf("expected %s, got %s", kind(t), got)}
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			if t.Kind() != reflect.Struct {
				return bad("an object")
			}
			fields := jsonFields(t)
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key := kt.(string)
				at := Join(path, key)
				if seen[key] {
					return &Error{Line: lineAt(data, dec.InputOffset()), Field: at, Msg: "given twice (the first would be lost)"}
				}
				seen[key] = true
				ft, ok := fields[key]
				if !ok {
					return &Error{Line: lineAt(data, dec.InputOffset()), Field: at,
						Msg: "unknown field (known: " + strings.Join(sortedNames(fields), ", ") + ")"}
				}
				if err := walk(dec, data, ft, at, lines); err != nil {
					return err
				}
			}
		case '[':
			if t.Kind() != reflect.Slice {
				return bad("an array")
			}
			for i := 0; dec.More(); i++ {
				if err := walk(dec, data, t.Elem(), path+"["+strconv.Itoa(i)+"]", lines); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		if t.Kind() != reflect.String {
			return bad(strconv.Quote(tok))
		}
	case json.Number:
		switch t.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			if _, err := strconv.ParseInt(tok.String(), 10, 64); err != nil {
				return bad(tok.String())
			}
		case reflect.Float64:
		default:
			return bad(tok.String())
		}
	case bool:
		if t.Kind() != reflect.Bool {
			return bad(strconv.FormatBool(tok))
		}
	case nil:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Struct {
			return bad("null")
		}
	}
	return nil
}

func kind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Join appends a key to a JSON path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Parent is the enclosing path: a.b[2].c -> a.b[2] -> a.b -> a -> "".
func Parent(path string) string {
	if strings.HasSuffix(path, "]") {
		return path[:strings.LastIndexByte(path, '[')]
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}
