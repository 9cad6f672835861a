package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopwords carry no meaning for choosing a tool; dropping them keeps a
// query like "how do I get the weather for a city" from rewarding every
// description that says "the" or "how". The list is the function words of
// English with the question words people start a request with (what, how,
// does, make), less the words a tool's operation can hinge on (not, no,
// up, down, off, out, over, more, new) and pronouns that are also
// nouns or verbs (mine, as in data mining).
var stopwords = setOf(
	"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
	"its", "of", "on", "or", "that", "the", "this", "to", "with", "i", "me", "my", "we", "our",
	"you", "your", "want", "need", "please", "can", "some", "which", "will", "all",
	// question words and auxiliaries
	"what", "whats", "how", "does", "do", "did", "doing", "make", "makes", "let", "lets", "would",
	"could", "should", "shall", "may", "might", "must", "have", "has", "had", "was", "were", "been",
	"being", "am", "when", "where", "who", "whom", "whose", "why", "there", "here", "if", "then",
	"than", "so", "just", "also", "them", "they", "their", "these", "those", "us", "him", "her",
	"his", "she", "he", "myself", "itself", "own", "else", "very", "too",
	"such", "both", "each", "any", "someone", "something", "somewhere", "thing", "things", "bit",
	"lot", "way", "im", "ive", "don", "doesn", "didn", "isn", "aren", "wasn",
)

// stopwordsBefore is the list before the evaluation on unseen catalogs, kept
// for its ablation (eval_test.go).
var stopwordsBefore = setOf(
	"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
	"its", "of", "on", "or", "that", "the", "this", "to", "with", "i", "me", "my", "we", "our",
	"you", "your", "want", "need", "please", "can", "some", "which", "will", "all",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// analyzer cuts a text into terms; the same one runs on the tools and on
// the query, so whatever it does to a word it does on both sides.
type analyzer struct {
	// brands keeps a word of two capitalised parts whole ("GitHub",
	// "JavaScript", "MongoDB") instead of cutting it at the second
	// capital: people write the product's name, and tool names carry it
	// as one word (github_create_issue).
	brands bool
	stops  map[string]bool
	stem   func(string) string
	// abbrevs spells out the short forms of software words, on both
	// sides, so "PR" meets "pull request" and "repo" "repository".
	abbrevs map[string]string
}

// textAnalyzer is the analyzer in use.
var textAnalyzer = analyzer{brands: true, stops: stopwords, stem: stemLight, abbrevs: abbreviations}

// abbreviations are short forms every software team writes, spelled out.
// Only unambiguous ones: "ci" (also a brand's tail) and "id" (a parameter
// of nearly every tool) are not here.
var abbreviations = map[string]string{
	"pr": "pull request", "prs": "pull requests", "repo": "repository", "repos": "repositories",
	"db": "database", "dbs": "databases", "js": "javascript", "dir": "directory", "dirs": "directories",
	"env": "environment", "envs": "environments", "msg": "message", "msgs": "messages",
	"org": "organization", "orgs": "organizations", "doc": "document", "docs": "documents",
	"app": "application", "apps": "applications", "auth": "authentication", "info": "information",
	"config": "configuration", "configs": "configurations", "stats": "statistics", "img": "image",
	"imgs": "images", "pic": "picture", "pics": "pictures", "vm": "virtual machine", "vms": "virtual machines",
}

// appendTerms appends the normalised terms of s to dst: s is cut into words
// at every character that is not a letter or a digit and at camelCase and
// letter/digit boundaries ("getHTTPStatus2" → get, http, status, 2), a
// possessive or contraction dropped ("someone's" → someone), lowercased,
// stopwords dropped and each word stemmed.
func (a *analyzer) appendTerms(dst []string, s string) []string {
	dst, _ = a.appendTermsWords(dst, nil, s, false)
	return dst
}

// appendTermsWords is appendTerms that, when keep is set, also appends to
// words the word of s (lowercased) each term came from, for a hit's reason.
func (a *analyzer) appendTermsWords(dst, words []string, s string, keep bool) ([]string, []string) {
	start := -1
	clitic := false // skipping the letters after an apostrophe ('s, 't, 're)
	brand := false  // the current run of letters is a brand: no cuts inside
	inRun := false
	var prev rune
	flush := func(end int) {
		if start >= 0 {
			n := len(dst)
			dst = a.appendNormal(dst, s[start:end])
			for ; keep && n < len(dst); n++ {
				words = append(words, strings.ToLower(s[start:end]))
			}
			start = -1
		}
	}
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case clitic && word:
		case !word:
			clitic = isApostrophe(r) && start >= 0
			flush(i)
		default:
			if !inRun {
				brand = a.brands && isBrand(wordAt(s, i))
			}
			if start >= 0 && !brand && wordBoundary(s, i, prev, r) {
				flush(i)
			}
			if start < 0 {
				start = i
			}
		}
		inRun = word
		if !word || !clitic {
			prev = r
		}
		if !word && !isApostrophe(r) {
			clitic = false
		}
	}
	flush(len(s))
	return dst, words
}

// wordAt is the run of letters and digits of s starting at i.
func wordAt(s string, i int) string {
	end := strings.IndexFunc(s[i:], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if end < 0 {
		return s[i:]
	}
	return s[i : i+end]
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

func (a *analyzer) appendNormal(dst []string, w string) []string {
	w = strings.ToLower(w)
	if long, ok := a.abbrevs[w]; ok {
		for _, part := range strings.Fields(long) {
			dst = append(dst, a.stem(part))
		}
		return dst
	}
	if a.stops[w] {
		return dst
	}
	return append(dst, a.stem(w))
}

// isBrand reports whether w is a capitalised word followed by exactly one
// more capitalised part, or by an uppercase run: GitHub, JavaScript,
// DevTools, MongoDB, CircleCI. A longer run of parts (CreatePullRequest) is
// an identifier and is cut.
func isBrand(w string) bool {
	parts := 0
	var prev rune
	for i, r := range w {
		switch {
		case !unicode.IsLetter(r):
			return false
		case i == 0:
			if !unicode.IsUpper(r) {
				return false
			}
			parts = 1
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			parts++
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i > 1 && parts == 1:
			return false // "HTTPServer": an acronym first
		}
		if i == 1 && !unicode.IsLower(r) {
			return false
		}
		prev = r
	}
	return parts == 2
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
		// "HTTPServer": the S starts a word when a lowercase letter follows;
		// "PRs", "URLs": a plural s ends the word.
		rest := s[i+utf8.RuneLen(r):]
		next, n := utf8.DecodeRuneInString(rest)
		if next == 's' {
			after, _ := utf8.DecodeRuneInString(rest[n:])
			if !unicode.IsLetter(after) {
				return false
			}
		}
		return unicode.IsLower(next)
	}
	return false
}

// stemBefore is the suffix stripper used before the evaluation on unseen
// catalogs (kept for its ablation): it cut every final e, so date became
// dat and site sit.
func stemBefore(w string) string {
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
