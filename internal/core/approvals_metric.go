package core

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/approval"
)

// registerApprovalsPending exports toolnexus_approvals_pending, computed at
// scrape time: calls held for a human's decision right now. An alert on it
// staying above zero tells the approvers someone is waiting. It reads the
// count the store keeps for its caps (one ZCARD with Redis), never the
// entries. The store may be shared (Redis), so the scrape bounds its
// look-up and reports NaN — no data, not "nobody waits" — when the store
// does not answer.
func registerApprovalsPending(reg prometheus.Registerer, store func() *approval.Store) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolnexus_approvals_pending",
		Help: "Approvals requested and not yet decided (policy @approval(\"required\")).",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := store().Pending(ctx)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}))
}
