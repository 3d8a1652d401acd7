package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/guard"
)

// RedactResult passes every string of a tool's JSON result, object keys
// included, through the security guard (guard.RedactKeepingLines, so line
// ranges still hold) and returns the result with its structure and key
// order unchanged. Strings without a secret are copied as they are, so a
// clean result comes back byte for byte. Servers call it on every result
// they return, whatever produced it: the guard is the last step before an
// agent sees repository or memory text.
func RedactResult(raw json.RawMessage) json.RawMessage {
	var out []byte // nil until the first redaction
	copied := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end, escaped := stringEnd(raw, i)
		if end < 0 {
			break // not JSON: leave it to the client to reject
		}
		lit := raw[i : end+1]
		var s string
		if escaped || !utf8.Valid(lit) {
			if json.Unmarshal(lit, &s) != nil {
				i = end
				continue
			}
		} else {
			s = string(lit[1 : len(lit)-1])
		}
		if red, found := guard.RedactKeepingLines(s); len(found) > 0 {
			enc, err := json.Marshal(red)
			if err == nil {
				out = append(append(out, raw[copied:i]...), enc...)
				copied = end + 1
			}
		}
		i = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[copied:]...)
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at raw[start], and whether the string holds escapes; -1 if it
// does not close.
func stringEnd(raw []byte, start int) (int, bool) {
	escaped := false
	for j := start + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

// RedactError returns err with the guard applied to a *Error's message and
// data (which can quote repository text: an unknown anchor's headings, a
// cycle's task titles). Any other error, and an Error without secrets, is
// returned as it is.
func RedactError(err error) error {
	var te *Error
	if !errors.As(err, &te) {
		return err
	}
	msg, found := guard.Redact(te.Message)
	data := te.Data
	if len(te.Data) > 0 {
		raw, merr := json.Marshal(te.Data)
		if merr != nil {
			return err
		}
		if red := RedactResult(raw); !bytes.Equal(red, raw) {
			data = nil
			if json.Unmarshal(red, &data) != nil {
				data = map[string]any{"detail": "error data withheld: it held a secret"}
			}
		} else if len(found) == 0 {
			return err
		}
	} else if len(found) == 0 {
		return err
	}
	return &Error{Code: te.Code, Message: msg, Data: data}
}

// Internal is the -32603 error a transport sends for a failure that is not
// a *Error. Its text passes the guard: a wrapped error can quote a path, a
// URL with credentials, or a line of a file.
func Internal(err error) *Error {
	msg, _ := guard.Redact(err.Error())
	return &Error{Code: CodeInternal, Message: "Internal error: " + msg}
}
