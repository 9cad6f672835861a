package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/cedar-policy/cedar-go"

	"github.com/toolnexus/toolnexus/internal/strictjson"
)

// Record turns a call's JSON arguments into a Cedar record. JSON has values
// Cedar lacks, so: an integer that fits 64 bits is a Long; any other number
// is a String holding its JSON text exactly as written ("1.5", "1e3");
// an array is a Set (unordered, duplicates merged); null members are left
// out of their record (has tests for them) and null array items dropped.
// Arguments that repeat a key in one object are refused: decoders differ
// on which value wins, and the policy must judge what the tool runs.
func Record(args json.RawMessage) (cedar.Record, error) {
	return argumentsRecord(args, &keepAll)
}

// argumentsRecord is Record holding only the top-level members reads
// keeps (match). It reads the JSON once, checking duplicate keys as it goes, and
// builds Cedar values directly: the call path of every call a policy reads
// the arguments of. Anything it does not take as a plain JSON object
// (malformed text, trailing data, another top-level value) goes to
// decodeRecord, so the answer and the error text stay encoding/json's.
func argumentsRecord(args json.RawMessage, reads *argumentReads) (cedar.Record, error) {
	s := argScanner{data: args}
	s.space()
	if s.i == len(s.data) {
		return emptyRecord, nil
	}
	if s.data[s.i] != '{' {
		return decodeRecord(args)
	}
	v, err := s.object(1, reads)
	if err == nil {
		if s.space(); s.i != len(s.data) {
			err = errNotPlain
		}
	}
	if dup, ok := err.(duplicateKeyError); ok {
		return cedar.Record{}, strictjson.ErrDuplicateKey(string(dup))
	}
	if c, ok := err.(caseKeyError); ok {
		return cedar.Record{}, c
	}
	if err != nil {
		return decodeRecord(args)
	}
	return v.(cedar.Record), nil
}

// decodeRecord is Record by way of encoding/json: for the text
// argumentsRecord leaves to it, so the result and the error read exactly
// as encoding/json has them.
func decodeRecord(args json.RawMessage) (cedar.Record, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return emptyRecord, nil
	}
	if k, found := strictjson.DuplicateKey(args); found {
		return cedar.Record{}, strictjson.ErrDuplicateKey(k)
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return cedar.Record{}, fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	return toRecord(v), nil
}

func toRecord(m map[string]any) cedar.Record {
	rm := make(cedar.RecordMap, len(m))
	for k, v := range m {
		if cv, ok := toValue(v); ok {
			rm[cedar.String(k)] = cv
		}
	}
	return cedar.NewRecord(rm)
}

func toValue(v any) (cedar.Value, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case bool:
		return cedar.Boolean(x), true
	case string:
		return cedar.String(x), true
	case json.Number:
		return number([]byte(x)), true
	case []any:
		vals := make([]cedar.Value, 0, len(x))
		for _, e := range x {
			if cv, ok := toValue(e); ok {
				vals = append(vals, cv)
			}
		}
		return cedar.NewSet(vals...), true
	case map[string]any:
		return toRecord(x), true
	}
	return nil, false
}

// number is a JSON number's Cedar value: a Long when it is an integer that
// fits 64 bits, else its text as a String.
func number(text []byte) cedar.Value {
	if n, ok := smallInt(text); ok {
		return cedar.Long(n)
	}
	if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		return cedar.Long(n)
	}
	return cedar.String(text)
}

// smallInt parses an optionally signed run of at most 18 digits (which
// always fits 64 bits) without allocating; ok is false for anything else.
func smallInt(text []byte) (n int64, ok bool) {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if text[0] == '-' {
		n = -n
	}
	return n, true
}

// maxDepth is encoding/json's nesting limit; deeper text is left to it.
const maxDepth = 10000

// errNotPlain is text argScanner leaves to encoding/json.
var errNotPlain = errors.New("not plain JSON")

// duplicateKeyError is a key repeated in one object.
type duplicateKeyError string

func (e duplicateKeyError) Error() string { return "duplicate key " + strconv.Quote(string(e)) }

// caseKeyError is a top-level key that differs only in letter case from a
// member a policy reads: encoding/json (the builtins', and any Go MCP
// server's decoder) gives it to the tool as that member, while the policy
// would see the member absent.
type caseKeyError struct{ key, member string }

func (e caseKeyError) Error() string {
	return fmt.Sprintf("the arguments name the key %q, which a tool reads as %q (keys that differ only in letter case are the same key to it); spell it %q as the tool's input schema has it",
		e.key, e.member, e.member)
}

// argScanner reads one JSON value from data, building Cedar values for
// what is kept and only checking what is not.
type argScanner struct {
	data []byte
	i    int
}

func (s *argScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads the value at s.i. It returns nil for null and for a value
// it only checked (build false).
func (s *argScanner) value(depth int, build bool) (cedar.Value, error) {
	if s.i == len(s.data) {
		return nil, errNotPlain
	}
	switch c := s.data[s.i]; {
	case c == '{':
		var reads *argumentReads
		if build {
			reads = &keepAll
		}
		return s.object(depth+1, reads)
	case c == '[':
		return s.array(depth+1, build)
	case c == '"':
		start, end, plain, err := s.str()
		if err != nil || !build {
			return nil, err
		}
		text, err := s.text(start, end, plain)
		return cedar.String(text), err
	case c == '-' || c >= '0' && c <= '9':
		text, err := s.number()
		if err != nil || !build {
			return nil, err
		}
		return number(text), nil
	}
	for _, lit := range literals {
		if bytes.HasPrefix(s.data[s.i:], lit.text) {
			s.i += len(lit.text)
			if !build {
				return nil, nil
			}
			return lit.value, nil
		}
	}
	return nil, errNotPlain
}

var (
	keepAll = argumentReads{any: true, whole: true}
	// emptyRecordValue is emptyRecord boxed once.
	emptyRecordValue cedar.Value = emptyRecord
	literals                     = []struct {
		text  []byte
		value cedar.Value
	}{{[]byte("true"), cedar.True}, {[]byte("false"), cedar.False}, {[]byte("null"), nil}}
)

// object reads the object at s.i into a record of the members reads keeps (match)
// (nil reads: check it, build nothing).
func (s *argScanner) object(depth int, reads *argumentReads) (cedar.Value, error) {
	if depth > maxDepth {
		return nil, errNotPlain
	}
	s.i++ // {
	var (
		members cedar.RecordMap
		keys    keySet
	)
	s.space()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return record(members, reads), nil
	}
	for {
		s.space()
		if s.i == len(s.data) || s.data[s.i] != '"' {
			return nil, errNotPlain
		}
		start, end, plain, err := s.str()
		if err != nil {
			return nil, err
		}
		key := s.data[start:end]
		if !plain {
			text, err := s.text(start, end, plain)
			if err != nil {
				return nil, err
			}
			key = []byte(text)
		}
		// The colon first: encoding/json reports a key without one as
		// malformed even when the key repeats.
		if s.space(); s.i == len(s.data) || s.data[s.i] != ':' {
			return nil, errNotPlain
		}
		s.i++
		if !keys.add(key) {
			return nil, duplicateKeyError(key)
		}
		s.space()
		keep, misspelt := reads.match(key)
		if misspelt != "" {
			return nil, caseKeyError{key: string(key), member: misspelt}
		}
		v, err := s.value(depth, keep)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if members == nil {
				members = cedar.RecordMap{}
			}
			members[cedar.String(key)] = v
		}
		if s.space(); s.i == len(s.data) {
			return nil, errNotPlain
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return record(members, reads), nil
		default:
			return nil, errNotPlain
		}
	}
}

// record is an object's value: nil when it was only checked.
func record(members cedar.RecordMap, reads *argumentReads) cedar.Value {
	switch {
	case reads == nil:
		return nil
	case len(members) == 0:
		return emptyRecordValue
	}
	return cedar.NewRecord(members)
}

// array reads the array at s.i into a Set, nulls dropped.
func (s *argScanner) array(depth int, build bool) (cedar.Value, error) {
	if depth > maxDepth {
		return nil, errNotPlain
	}
	s.i++ // [
	var items []cedar.Value
	s.space()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return set(items, build), nil
	}
	for {
		s.space()
		v, err := s.value(depth, build)
		if err != nil {
			return nil, err
		}
		if v != nil {
			items = append(items, v)
		}
		if s.space(); s.i == len(s.data) {
			return nil, errNotPlain
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return set(items, build), nil
		default:
			return nil, errNotPlain
		}
	}
}

func set(items []cedar.Value, build bool) cedar.Value {
	if !build {
		return nil
	}
	return cedar.NewSet(items...)
}

// str reads the string at s.i; its contents are data[start:end]. plain
// means they are the string as they stand: no escapes, valid UTF-8.
func (s *argScanner) str() (start, end int, plain bool, err error) {
	s.i++ // "
	start, plain = s.i, true
	ascii := true
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			end = s.i
			s.i++
			if !ascii && plain {
				plain = utf8.Valid(s.data[start:end])
			}
			return start, end, plain, nil
		case c == '\\':
			plain = false
			if err := s.escape(); err != nil {
				return 0, 0, false, err
			}
			continue
		case c < 0x20:
			return 0, 0, false, errNotPlain
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return 0, 0, false, errNotPlain
}

// escape steps over the escape sequence at s.i, refusing one JSON has not.
func (s *argScanner) escape() error {
	if s.i+1 >= len(s.data) {
		return errNotPlain
	}
	switch s.data[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.data) {
			return errNotPlain
		}
		for _, h := range s.data[s.i+2 : s.i+6] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return errNotPlain
			}
		}
		s.i += 6
		return nil
	}
	return errNotPlain
}

// text is the string whose contents are data[start:end]; one that is not
// plain is decoded by encoding/json, so escapes, surrogates and invalid
// UTF-8 come out exactly as there.
func (s *argScanner) text(start, end int, plain bool) (string, error) {
	if plain {
		return string(s.data[start:end]), nil
	}
	var out string
	if err := json.Unmarshal(s.data[start-1:end+1], &out); err != nil {
		return "", errNotPlain
	}
	return out, nil
}

// number reads the number at s.i (JSON's grammar) and returns its text.
func (s *argScanner) number() ([]byte, error) {
	start := s.i
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil, errNotPlain
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, errNotPlain
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, errNotPlain
		}
	}
	return s.data[start:s.i], nil
}

func (s *argScanner) digits() int {
	n := 0
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// keySet is the keys of one object, to refuse a repeated one — equal, or
// equal but for letter case, as encoding/json matches keys to fields: a
// list (in place, for the few keys most objects have), a map of folded
// keys past that.
type keySet struct {
	list [keySetListMax][]byte
	n    int
	m    map[string]struct{}
}

const keySetListMax = 16

func (k *keySet) add(key []byte) bool {
	if k.m != nil {
		folded := strictjson.FoldKey(string(key))
		if _, dup := k.m[folded]; dup {
			return false
		}
		k.m[folded] = struct{}{}
		return true
	}
	for _, seen := range k.list[:k.n] {
		if bytes.EqualFold(seen, key) {
			return false
		}
	}
	if k.n < keySetListMax {
		k.list[k.n] = key
		k.n++
		return true
	}
	k.m = make(map[string]struct{}, 2*keySetListMax)
	for _, seen := range k.list {
		k.m[strictjson.FoldKey(string(seen))] = struct{}{}
	}
	k.m[strictjson.FoldKey(string(key))] = struct{}{}
	return true
}
