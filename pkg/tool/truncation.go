package tool

import "github.com/toolnexus/toolnexus/internal/truncation"

// TruncationNote is the note a source or the executor appends to an output
// it cut: omitted is the true number of bytes left out, counting what any
// earlier cut already dropped. The executor recognises the note and, when
// it cuts the output again, reports the true total in one note.
func TruncationNote(omitted int64) string {
	return truncation.Note(omitted)
}
