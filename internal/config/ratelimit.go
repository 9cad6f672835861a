package config

import (
	"encoding/json"
	"math"
)

// Rate is a token bucket: CallsPerSecond refill, Burst capacity.
type Rate struct {
	CallsPerSecond float64
	Burst          int
}

// PrincipalRate is the limits of one principal ("*" = each principal not
// named otherwise): its calls per second and its calls running at once.
type PrincipalRate struct {
	Rate
	// Concurrent caps the principal's calls running at once (0 = no cap).
	Concurrent int
}

// RateLimits are limits.principals and limits.tools.NAME.callsPerSecond /
// burst (internal/ratelimit). Calls over them are refused before they run,
// with a delay to retry after.
type RateLimits struct {
	Principals map[string]PrincipalRate
	Tools      map[string]Rate
}

// Enabled reports whether any rate limit is set.
func (r RateLimits) Enabled() bool { return len(r.Principals) > 0 || len(r.Tools) > 0 }

// splitRateLimits takes the rate-limit keys out of the limits section and
// parses them, returning the rest for parseLimits, so the two concerns
// keep their own parsers.
func splitRateLimits(raw json.RawMessage) (RateLimits, json.RawMessage, error) {
	var rl RateLimits
	if raw == nil {
		return rl, nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return rl, raw, nil // parseLimits reports the type error
	}
	if p, ok := top["principals"]; ok {
		delete(top, "principals")
		if err := parsePrincipalRates(nonNull(p), &rl); err != nil {
			return rl, nil, err
		}
	}
	var tools map[string]map[string]json.RawMessage
	if t, ok := top["tools"]; ok && json.Unmarshal(t, &tools) == nil {
		for _, name := range sortedKeys(tools) {
			obj := tools[name]
			cps, hasCPS := obj["callsPerSecond"]
			burst, hasBurst := obj["burst"]
			if !hasCPS && !hasBurst {
				continue
			}
			delete(obj, "callsPerSecond")
			delete(obj, "burst")
			key := "limits.tools." + name
			r, err := parseRate(key, cps, burst)
			if err != nil {
				return rl, nil, err
			}
			if rl.Tools == nil {
				rl.Tools = map[string]Rate{}
			}
			rl.Tools[name] = r
		}
		top["tools"], _ = json.Marshal(tools)
	}
	rest, _ := json.Marshal(top)
	return rl, rest, nil
}

func parsePrincipalRates(raw json.RawMessage, rl *RateLimits) error {
	if raw == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := strictDecode("limits.principals", raw, &m); err != nil {
		return err
	}
	for _, name := range sortedKeys(m) {
		key := "limits.principals." + name
		var r struct {
			CallsPerSecond json.RawMessage `json:"callsPerSecond"`
			Burst          json.RawMessage `json:"burst"`
			Concurrent     *int            `json:"concurrent"`
		}
		if err := strictDecode(key, m[name], &r); err != nil {
			return err
		}
		pr := PrincipalRate{}
		if r.CallsPerSecond != nil || r.Burst != nil {
			rate, err := parseRate(key, r.CallsPerSecond, r.Burst)
			if err != nil {
				return err
			}
			pr.Rate = rate
		}
		if r.Concurrent != nil {
			if *r.Concurrent < 0 {
				return keyErr(key+".concurrent", "must be 0 (no cap) or more")
			}
			pr.Concurrent = *r.Concurrent
		}
		if rl.Principals == nil {
			rl.Principals = map[string]PrincipalRate{}
		}
		rl.Principals[name] = pr
	}
	return nil
}

// parseRate reads callsPerSecond (required, > 0) and burst (default: the
// rate rounded up, at least 1).
func parseRate(key string, cps, burst json.RawMessage) (Rate, error) {
	var r Rate
	if cps == nil {
		return r, keyErr(key+".callsPerSecond", "is required with burst, e.g. 20")
	}
	if err := json.Unmarshal(cps, &r.CallsPerSecond); err != nil || r.CallsPerSecond <= 0 {
		return r, keyErr(key+".callsPerSecond", "must be a number above 0, e.g. 20 or 0.5")
	}
	r.Burst = int(math.Max(1, math.Ceil(r.CallsPerSecond)))
	if burst != nil {
		if err := json.Unmarshal(burst, &r.Burst); err != nil || r.Burst < 1 {
			return r, keyErr(key+".burst", "must be an integer of at least 1")
		}
	}
	return r, nil
}
