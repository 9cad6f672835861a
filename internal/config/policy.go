package config

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/toolnexus/toolnexus/internal/policy"
)

// Defaults of the policy section.
const (
	DefaultApprovalTimeout     = 15 * time.Minute
	DefaultMaxPendingApprovals = 100
	DefaultMaxPendingTotal     = 1000
)

// Policy modes.
const (
	PolicyEnforce = "enforce"
	PolicyShadow  = "shadow"
)

// Policy is the `policy` section: Cedar policies every call is checked
// against (internal/policy), and who approves the calls they hold back.
type Policy struct {
	// Files are the policy files, absolute.
	Files []string
	// Mode is PolicyEnforce, or PolicyShadow (only log and count).
	Mode string
	// ApprovalTimeout is how long a pending approval can be decided.
	ApprovalTimeout time.Duration
	// Approvers are principal or group names that may decide approvals
	// (admins always may).
	Approvers []string
	// MaxPending bounds the undecided approvals of one principal, so one
	// caller cannot hold back everyone else's; MaxPendingTotal bounds
	// them all.
	MaxPending      int
	MaxPendingTotal int
	// Set is the parsed files; nil when Files is empty. Parsing here, not
	// at start, makes --check and a reload refuse what a start would.
	Set *policy.Set
}

// Enabled reports whether calls are checked against policies.
func (p Policy) Enabled() bool { return p.Set != nil }

func parsePolicy(raw json.RawMessage, baseDir string) (Policy, error) {
	p := Policy{Mode: PolicyEnforce, ApprovalTimeout: DefaultApprovalTimeout, MaxPending: DefaultMaxPendingApprovals, MaxPendingTotal: DefaultMaxPendingTotal}
	if raw == nil {
		return p, nil
	}
	var r struct {
		Files           []string `json:"files"`
		Mode            *string  `json:"mode"`
		ApprovalTimeout *int64   `json:"approvalTimeout"`
		Approvers       []string `json:"approvers"`
		MaxPending      *int     `json:"maxPending"`
		MaxPendingTotal *int     `json:"maxPendingTotal"`
	}
	if err := strictDecode("policy", raw, &r); err != nil {
		return p, err
	}
	if r.Mode != nil {
		if *r.Mode != PolicyEnforce && *r.Mode != PolicyShadow {
			return p, keyErr("policy.mode", "must be %q or %q, not %q", PolicyEnforce, PolicyShadow, *r.Mode)
		}
		p.Mode = *r.Mode
	}
	if r.ApprovalTimeout != nil {
		if *r.ApprovalTimeout < 1000 {
			return p, keyErr("policy.approvalTimeout", "must be at least 1000 ms (a human decides within it)")
		}
		p.ApprovalTimeout = time.Duration(*r.ApprovalTimeout) * time.Millisecond
	}
	if r.MaxPending != nil {
		if *r.MaxPending < 1 {
			return p, keyErr("policy.maxPending", "must be at least 1")
		}
		p.MaxPending = *r.MaxPending
	}
	if r.MaxPendingTotal != nil {
		if *r.MaxPendingTotal < 1 {
			return p, keyErr("policy.maxPendingTotal", "must be at least 1")
		}
		p.MaxPendingTotal = *r.MaxPendingTotal
	}
	if r.MaxPendingTotal == nil && p.MaxPending > p.MaxPendingTotal {
		// A config from before maxPending was per principal keeps working.
		p.MaxPendingTotal = p.MaxPending
	}
	if p.MaxPending > p.MaxPendingTotal {
		return p, keyErr("policy.maxPending", "is per principal and must not exceed policy.maxPendingTotal (%d), the bound for all principals", p.MaxPendingTotal)
	}
	p.Approvers = r.Approvers
	for i, f := range r.Files {
		if f == "" {
			return p, keyErr("policy.files", "entry %d is empty; give the path of a .cedar file", i)
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(baseDir, f)
		}
		p.Files = append(p.Files, f)
	}
	if len(p.Files) == 0 {
		return p, nil
	}
	set, err := policy.Load(p.Files)
	if err != nil {
		var fe *policy.FileError
		if errors.As(err, &fe) {
			return p, keyErr("policy.files", "%v (fix the policy, or take the file out of policy.files)", fe)
		}
		return p, keyErr("policy.files", "%v", err)
	}
	p.Set = set
	return p, nil
}
