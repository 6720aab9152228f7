package runfmt

import "fmt"

// ParseError is a problem at a known place in a run file. Its Error text is one line:
// file:line: field NAME: message.
type ParseError struct {
	File  string
	Line  int // 1-based; 0 when the problem concerns the file as a whole
	Field string
	Msg   string
}

func (e *ParseError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return fmt.Sprintf("%s: field %s: %s", loc, e.Field, e.Msg)
}

func perr(file string, line int, field, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}
