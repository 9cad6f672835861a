package tokenexchange_test

import (
	"strings"
	"testing"

	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
)

func TestParseErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ te, want string }{
		{`{"clientId": "x", "audience": "a"}`, "[0].tokenExchange.tokenUrl: "},
		{`{"tokenUrl": "token", "clientId": "x", "audience": "a"}`, "[0].tokenExchange.tokenUrl: must be an https URL"},
		{`{"tokenUrl": "http://idp.example.com/token", "clientId": "x", "audience": "a"}`, "[0].tokenExchange.tokenUrl: must be an https URL"},
		{`{"tokenUrl": "https://idp.test/token", "audience": "a"}`, "[0].tokenExchange.clientId: "},
		{`{"tokenUrl": "https://idp.test/token", "clientId": "x"}`, "[0].tokenExchange.audience: set audience"},
		{`{"tokenUrl": "https://idp.test/token", "clientId": "x", "audience": "a", "secret": "s"}`, "[0].tokenExchange.secret: unknown key"},
		{`"yes"`, "[0].tokenExchange: must be an object"},
	} {
		_, err := httpsrc.ParseTools([]byte(`[{"name": "t", "url": "https://api.test/x", "tokenExchange": ` + c.te + `}]`))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.te, err, c.want)
		}
	}
	tools, err := httpsrc.ParseTools([]byte(`[{"name": "t", "url": "https://api.test/x", "tokenExchange":
		{"tokenUrl": "https://idp.test/token", "clientId": "x", "clientSecret": "${file:/run/secrets/x}", "audience": "a"}}]`))
	if err != nil || tools[0].TokenExchange == nil || tools[0].TokenExchange.ClientSecret != "${file:/run/secrets/x}" {
		t.Fatalf("valid tokenExchange: %+v, %v (the secret must stay a reference)", tools, err)
	}
}
