package core

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/metrics"
)

// authOptions makes what every Authenticator of this core shares across
// reloads: the logger and the toolnexus_auth_failures_total counters.
func authOptions(reg prometheus.Registerer, log *slog.Logger) auth.Options {
	reasons := auth.Reasons()
	names := make([]string, len(reasons))
	for i, r := range reasons {
		names[i] = r.String()
	}
	counters := metrics.NewAuthFailures(reg, names)
	byReason := make([]prometheus.Counter, int(reasons[len(reasons)-1])+1)
	for i, r := range reasons {
		byReason[r] = counters[i]
	}
	unmatched := metrics.NewGroupsUnmatched(reg)
	return auth.Options{Logger: log, Failed: func(r auth.Reason) {
		if int(r) < len(byReason) && byReason[r] != nil {
			byReason[r].Inc()
		}
	}, GroupsUnmatched: unmatched.Inc}
}

func (c *Core) newAuthenticator(a config.Auth) *auth.Authenticator { return auth.New(a, c.authOpts) }
