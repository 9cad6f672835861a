package tool

// Refusal names the guard or limit that refused what a call asked for: a
// path outside the workspace, a connection to a forbidden address, a
// session over its quota, a command killed by a resource limit. A tool
// sets it on its Result (IsError set, Output saying why, as for any
// failure); the server counts it in
// toolnexus_sandbox_refusals_total{source, reason}, so an operator sees
// how often the model runs into the sandbox without reading outputs.
// The zero value is no refusal.
type Refusal uint8

// The refusals, with their reason label.
const (
	RefusalNone Refusal = iota
	// RefusalPathEscape: a file tool's path resolves outside the
	// workspace (or into the directory of other sessions).
	RefusalPathEscape
	// RefusalNetworkAddress: webfetch's dial guard refused a loopback,
	// private, link-local or otherwise forbidden address.
	RefusalNetworkAddress
	// RefusalSessionQuota: a write would take the session's workspace
	// over sessions.maxBytes.
	RefusalSessionQuota
	// RefusalSessionLimit: the caller already has sessions.max sessions.
	RefusalSessionLimit
	// RefusalCPULimit: a command was killed for using its CPU time limit
	// (SIGXCPU).
	RefusalCPULimit
	// RefusalFileSizeLimit: a command was killed for writing past its
	// file size limit (SIGXFSZ), the session quota's included.
	RefusalFileSizeLimit

	refusalEnd
)

var refusalNames = [...]string{
	RefusalNone:           "none",
	RefusalPathEscape:     "path_escape",
	RefusalNetworkAddress: "network_address",
	RefusalSessionQuota:   "session_quota",
	RefusalSessionLimit:   "session_limit",
	RefusalCPULimit:       "cpu_limit",
	RefusalFileSizeLimit:  "file_size_limit",
}

// String is the reason label ("path_escape", ...).
func (r Refusal) String() string {
	if int(r) < len(refusalNames) {
		return refusalNames[r]
	}
	return "none"
}

// Refusals lists every refusal (RefusalNone excluded), in order.
func Refusals() []Refusal {
	out := make([]Refusal, 0, refusalEnd-1)
	for r := RefusalNone + 1; r < refusalEnd; r++ {
		out = append(out, r)
	}
	return out
}

// NumRefusals is one more than the largest Refusal: an array indexed by
// Refusal has this length.
const NumRefusals = int(refusalEnd)

// Refused marks r as a refusal and returns it.
func (r Result) Refused(why Refusal) Result {
	r.Refusal = why
	return r
}
