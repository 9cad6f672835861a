package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
)

// Every principal may make 2 calls at once, then one a second; with
// WithCluster the same limits hold across every replica.
func ExampleLimiter_Admit() {
	l := ratelimit.New(config.RateLimits{Principals: map[string]config.PrincipalRate{
		"*": {Rate: config.Rate{CallsPerSecond: 1, Burst: 2}},
	}})
	now := time.Unix(1000, 0)
	for range 3 {
		ticket, refused := l.Admit(context.Background(), "agent", "read", now)
		if refused != nil {
			fmt.Println("refused by", refused.Limit, "retry after", refused.RetryAfter)
			continue
		}
		fmt.Println("admitted")
		ticket.Release()
	}
	// Output:
	// admitted
	// admitted
	// refused by limits.principals.*.callsPerSecond retry after 1s
}
