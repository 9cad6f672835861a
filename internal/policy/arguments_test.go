package policy

import (
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go"
)

// argumentTexts are arguments that exercise every branch of the one-pass
// conversion, and the text it leaves to encoding/json.
var argumentTexts = []string{
	``, `  `, `{}`, ` { } `, `null`, `[1]`, `"x"`, `1`, `true`,
	`{"message":"hello"}`,
	`{"n":3,"neg":-7,"zero":0,"negzero":-0,"f":1.50,"e":1e3,"E":-2.5E-3,"big":123456789012345678901234567890,"max":9223372036854775807,"over":9223372036854775808,"min":-9223372036854775808,"eighteen":999999999999999999}`,
	`{"list":["a","b",null,"a",["x",{"k":null}]],"gone":null,"nested":{"ok":true,"no":false,"deep":{"x":[]}}}`,
	`{"esc":"a\"b\\c\/d\b\f\n\r\t","u":"\u00e9\u4e2d\ud83d\ude00","lone":"\ud800x","utf8":"café 中文 😀"}`,
	"{\"bad\":\"\xff\xfe\",\"ok\":1}", "{\"k\xff\":1}",
	`{"\u0061":1,"b":2}`, `{"a":1,"\u0061":2}`, `{"a":1,"a":2}`, `{"o":{"k":1,"k":2}}`, `{"o":{"k":1},"p":{"k":2}}`,
	`{"l":[{"k":1},{"k":1}],"m":"k"}`, `{"a":null,"a":1}`, `{"a":{"b":1},"a":3}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"a":19}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18}`,
	`{"a":1} trailing`, `{"a":1} {"b":1,"b":2}`, `{"a":1}{"a":1}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":truex}`,
	`{"a":"x` + "\n" + `"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{a:1}`, `{"a":1`, `{"a":`, `{`, `{"a":NaN}`,
	"\t{\n\"a\" :\r[ 1 , 2 ] }\n",
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat(`}`, 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat(`}`, 10000),
	`{"a":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
	`{"a":` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `}`,
}

// The one-pass conversion gives exactly what decoding with encoding/json
// gives: the same record, or the same error text. go test runs the seeds;
// go test -fuzz FuzzArgumentsRecord looks further.
func FuzzArgumentsRecord(f *testing.F) {
	for _, text := range argumentTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) { sameAsDecoding(t, text) })
}

func sameAsDecoding(t *testing.T, text string) {
	t.Helper()
	got, gotErr := Record([]byte(text))
	want, wantErr := decodeRecord([]byte(text))
	short := text
	if len(short) > 80 {
		short = short[:80] + "…"
	}
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Errorf("%q: error %v, decoding says %v", short, gotErr, wantErr)
	case gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Errorf("%q: error %q, decoding says %q", short, gotErr, wantErr)
	case gotErr == nil && !got.Equal(want):
		t.Errorf("%q: %s, decoding says %s", short, got.MarshalCedar(), want.MarshalCedar())
	}
}

// Only the members the policies name are converted; the rest of the text
// is still read whole, so a repeated key or broken syntax anywhere refuses
// the call as before.
func TestArgumentsRecordKeepsWhatIsRead(t *testing.T) {
	t.Parallel()
	reads := &argumentReads{any: true, names: []string{"command", "path"}}
	got, err := argumentsRecord([]byte(`{"command":"ls","other":{"x":[1,2]},"path":null,"more":"y"}`), reads)
	if err != nil {
		t.Fatal(err)
	}
	want := cedar.NewRecord(cedar.RecordMap{"command": cedar.String("ls")})
	if !got.Equal(want) {
		t.Fatalf("%s, want %s", got.MarshalCedar(), want.MarshalCedar())
	}
	for text, wantErr := range map[string]string{
		`{"command":"ls","other":{"x":1,"x":2}}`: `repeat the key "x"`,
		`{"other":"a","other":"b"}`:              `repeat the key "other"`,
		`{"command":"ls","other":[1,}`:           "not a JSON object",
		`{"command":"ls","other":"\q"}`:          "not a JSON object",
	} {
		if _, err := argumentsRecord([]byte(text), reads); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: %v, want an error containing %q", text, err, wantErr)
		}
	}
}

func BenchmarkArgumentsRecord(b *testing.B) {
	args := []byte(`{"command":"git log --oneline | head -20","timeout":30000,"description":"recent commits","env":{"PAGER":"cat"},"tags":["a","b"]}`)
	for _, bc := range []struct {
		name string
		run  func() (cedar.Record, error)
	}{
		{"decode", func() (cedar.Record, error) { return decodeRecord(args) }},
		{"onepass", func() (cedar.Record, error) { return Record(args) }},
		{"onepass-one-member", func() (cedar.Record, error) {
			return argumentsRecord(args, &argumentReads{any: true, names: []string{"command"}})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
