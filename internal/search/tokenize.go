package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopwords carry no meaning for choosing a tool; dropping them keeps a
// query like "get the weather for a city" from rewarding every description
// that says "the".
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "for": true, "from": true, "in": true, "into": true, "is": true, "it": true,
	"its": true, "of": true, "on": true, "or": true, "that": true, "the": true, "this": true,
	"to": true, "with": true, "i": true, "me": true, "my": true, "we": true, "our": true,
	"you": true, "your": true, "want": true, "need": true, "please": true, "can": true,
	"some": true, "which": true, "will": true, "all": true,
}

// appendTerms appends the normalised terms of s to dst: s is cut into words
// at every non-letter-or-digit and at camelCase and letter/digit
// boundaries ("getHTTPStatus2" → get, http, status, 2), lowercased,
// stopwords dropped and each word stemmed.
func appendTerms(dst []string, s string) []string {
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 {
			if w := normalise(s[start:end]); w != "" {
				dst = append(dst, w)
			}
			start = -1
		}
	}
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = r
			continue
		}
		if start >= 0 && wordBoundary(s, i, prev, r) {
			flush(i)
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	flush(len(s))
	return dst
}

// wordBoundary reports whether a new word starts at s[i] (rune r, after
// prev) inside a run of letters and digits.
func wordBoundary(s string, i int, prev, r rune) bool {
	switch {
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true // camelCase
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true // v2, 2fa
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		// "HTTPServer": the S starts a word when a lowercase letter follows.
		next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
		return unicode.IsLower(next)
	}
	return false
}

func normalise(w string) string {
	w = strings.ToLower(w)
	if stopwords[w] {
		return ""
	}
	return stem(w)
}

// stem folds the common English inflections onto one form so "files",
// "file" and "filed"; "creates", "creating" and "created" meet. It is a
// small suffix stripper, not a full Porter stemmer: tool vocabularies are
// short imperative phrases, and the same function runs on the index and
// the query, so a crude stem still matches itself.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = w[:len(w)-2]
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
