package sources

import "strings"

// Suggest returns the candidate closest to s, for "did you mean" in config
// errors, or "" when none is close. The allowed edit distance grows with
// the key's length (at most 3), so a short unrelated key ("fs") is never
// "corrected" to another short one ("mcp"). Case is ignored.
func Suggest(s string, candidates []string) string {
	best, bestD := "", min(3, max(1, len(s)/2))+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance, in two rows of memory.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
