package core

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/approval"
)

// registerApprovalsPending exports toolnexus_approvals_pending, computed at
// scrape time: calls held for a human's decision right now. An alert on it
// staying above zero tells the approvers someone is waiting.
func registerApprovalsPending(reg prometheus.Registerer, store func() *approval.Store) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolnexus_approvals_pending",
		Help: "Approvals requested and not yet decided (policy @approval(\"required\")).",
	}, func() float64 {
		n := 0
		for _, e := range store().List() {
			if e.Status == approval.Pending {
				n++
			}
		}
		return float64(n)
	}))
}
