package auth_test

import (
	"fmt"

	"github.com/toolnexus/toolnexus/internal/auth"
)

func fmtAll(p *auth.Principal) string {
	return fmt.Sprintf("%v %+v %#v %s", p, p, p, p)
}
