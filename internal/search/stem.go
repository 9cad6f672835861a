package search

import "strings"

// stemLight folds English inflections onto one form: the first and the last
// steps of the Porter2 ("English") stemmer, as its published description
// gives them — plurals and -ed/-ing with the e, the doubled consonant and
// the y put right, then a final e or double l dropped where the word's
// syllables allow — without the derivational steps (2 to 4), which conflate
// words a tool catalog keeps apart ("general"/"generate",
// "organization"/"organize"). files, filed, filing → file; date, dated →
// date; site, sites → site; create, created, creating → creat; issue,
// issued → issu. Words that are not plain ASCII letters, and words of one or
// two letters, are kept as they are.
func stemLight(w string) string {
	if len(w) <= 2 || !isASCIILetters(w) {
		return w
	}
	b := []byte(w)
	// y as a consonant: at the start and after a vowel.
	for i := range b {
		if b[i] == 'y' && (i == 0 || isVowel(b[i-1])) {
			b[i] = 'Y'
		}
	}
	r1, r2 := regions(b)
	b = step1a(b)
	b = step1b(b, r1)
	b = step1c(b)
	b = step5(b, r1, r2)
	return strings.ToLower(string(b))
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// regions are R1 (after the first consonant that follows a vowel) and R2
// (the same rule applied again within R1), as offsets into b.
func regions(b []byte) (r1, r2 int) {
	r1 = len(b)
	for _, p := range []string{"gener", "commun", "arsen"} {
		if strings.HasPrefix(string(b), p) {
			r1 = len(p)
		}
	}
	if r1 == len(b) {
		r1 = afterVowelConsonant(b, 0)
	}
	return r1, afterVowelConsonant(b, r1)
}

func afterVowelConsonant(b []byte, from int) int {
	for i := from + 1; i < len(b); i++ {
		if !isVowel(b[i]) && isVowel(b[i-1]) {
			return i + 1
		}
	}
	return len(b)
}

// shortSyllable reports whether b ends in a short syllable: a consonant, a
// vowel, a consonant other than w, x or Y; or, for a two-letter word, a
// vowel and a consonant.
func shortSyllable(b []byte) bool {
	n := len(b)
	if n == 2 {
		return isVowel(b[0]) && !isVowel(b[1])
	}
	return n >= 3 && !isVowel(b[n-3]) && isVowel(b[n-2]) && !isVowel(b[n-1]) && !strings.ContainsRune("wxY", rune(b[n-1]))
}

func hasVowel(b []byte) bool {
	for _, c := range b {
		if isVowel(c) {
			return true
		}
	}
	return false
}

func step1a(b []byte) []byte {
	s := string(b)
	switch {
	case strings.HasSuffix(s, "sses"):
		return b[:len(b)-2]
	case strings.HasSuffix(s, "ied") || strings.HasSuffix(s, "ies"):
		if len(b) > 4 {
			return b[:len(b)-2] // cries → cri
		}
		return b[:len(b)-1] // ties → tie
	case strings.HasSuffix(s, "us") || strings.HasSuffix(s, "ss"):
		return b
	case strings.HasSuffix(s, "s") && len(b) > 2 && hasVowel(b[:len(b)-2]):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte, r1 int) []byte {
	s := string(b)
	for _, suf := range []string{"eedly", "eed"} {
		if strings.HasSuffix(s, suf) {
			if len(b)-len(suf) >= r1 {
				return b[:len(b)-len(suf)+2]
			}
			return b
		}
	}
	for _, suf := range []string{"ingly", "edly", "ing", "ed"} {
		if !strings.HasSuffix(s, suf) {
			continue
		}
		stem := b[:len(b)-len(suf)]
		if !hasVowel(stem) {
			return b
		}
		t := string(stem)
		switch {
		case strings.HasSuffix(t, "at") || strings.HasSuffix(t, "bl") || strings.HasSuffix(t, "iz"):
			return append(stem, 'e')
		case len(t) >= 2 && t[len(t)-1] == t[len(t)-2] && strings.ContainsRune("bdfgmnprt", rune(t[len(t)-1])):
			return stem[:len(stem)-1]
		case shortSyllable(stem) && r1 >= len(stem):
			return append(stem, 'e')
		}
		return stem
	}
	return b
}

// step1c turns a final y after a consonant (not the first letter) into i:
// query, queries → queri.
func step1c(b []byte) []byte {
	n := len(b)
	if n > 2 && (b[n-1] == 'y' || b[n-1] == 'Y') && !isVowel(b[n-2]) {
		b[n-1] = 'i'
	}
	return b
}

func step5(b []byte, r1, r2 int) []byte {
	n := len(b)
	switch {
	case b[n-1] == 'e' && (n-1 >= r2 || n-1 >= r1 && !shortSyllable(b[:n-1])):
		return b[:n-1]
	case b[n-1] == 'l' && n-1 >= r2 && n >= 2 && b[n-2] == 'l':
		return b[:n-1]
	}
	return b
}
