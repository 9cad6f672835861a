package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// jsonOptions: field names as in the .proto (is_error, input_schema, as
// the docs write them) and defaults included, so a script can read
// .is_error or .outcome without guarding for absent keys.
var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}

// writeJSON prints m indented. protojson's own spacing is deliberately
// unstable, so it is re-indented with encoding/json, which keeps every
// number literal as written.
func writeJSON(w io.Writer, m proto.Message) error {
	b, err := jsonOptions.Marshal(m)
	if err != nil {
		return err
	}
	return writeIndented(w, b)
}

// writeJSONLine prints m as one compact line (NDJSON for streams).
func writeJSONLine(w io.Writer, m proto.Message) error {
	b, err := jsonOptions.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

func writeIndented(w io.Writer, b []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return fmt.Errorf("server sent invalid JSON: %v", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// cell makes s fit one table cell: the first line only, tabs flattened,
// cut to max runes with an ellipsis.
func cell(s string, max int) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimSpace(strings.ReplaceAll(line, "\t", " "))
	if utf8.RuneCountInString(line) > max {
		r := []rune(line)
		return string(r[:max-1]) + "…"
	}
	if more && line != "" {
		return line + " …"
	}
	return line
}

// orDash keeps empty table cells visible.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printText writes s and ends it with a newline unless it already has one.
func printText(w io.Writer, s string) {
	io.WriteString(w, s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		io.WriteString(w, "\n")
	}
}
