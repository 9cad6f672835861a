package auth

// Reason is why a credential was refused: the label of
// toolnexus_auth_failures_total and the short text a caller is told. It
// never carries any part of the token.
type Reason uint8

// The refusal reasons. ReasonNone is not a refusal.
const (
	ReasonNone Reason = iota
	ReasonMissing
	ReasonMalformed
	ReasonUnknownToken
	ReasonBadSignature
	ReasonUnknownKey
	ReasonAlgNone
	ReasonAlgMismatch
	ReasonExpired
	ReasonNotYetValid
	ReasonWrongIssuer
	ReasonWrongAudience
	ReasonMissingScope
	ReasonBadClaims
	ReasonProviderUnreachable
	ReasonPrincipalTaken
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:                "none",
	ReasonMissing:             "missing",
	ReasonMalformed:           "malformed",
	ReasonUnknownToken:        "unknown_token",
	ReasonBadSignature:        "bad_signature",
	ReasonUnknownKey:          "unknown_key",
	ReasonAlgNone:             "alg_none",
	ReasonAlgMismatch:         "alg_mismatch",
	ReasonExpired:             "expired",
	ReasonNotYetValid:         "not_yet_valid",
	ReasonWrongIssuer:         "wrong_issuer",
	ReasonWrongAudience:       "wrong_audience",
	ReasonMissingScope:        "missing_scope",
	ReasonBadClaims:           "bad_claims",
	ReasonProviderUnreachable: "provider_unreachable",
	ReasonPrincipalTaken:      "principal_taken",
}

var reasonTexts = [numReasons]string{
	ReasonUnknownToken:        "invalid bearer token",
	ReasonBadSignature:        "invalid bearer token: bad signature",
	ReasonUnknownKey:          "invalid bearer token: signed by an unknown key",
	ReasonAlgNone:             "invalid bearer token: unsigned (alg none)",
	ReasonAlgMismatch:         "invalid bearer token: algorithm does not match the issuer's key",
	ReasonExpired:             "invalid bearer token: expired",
	ReasonNotYetValid:         "invalid bearer token: not yet valid",
	ReasonWrongIssuer:         "invalid bearer token: issuer not accepted",
	ReasonWrongAudience:       "invalid bearer token: audience is not this server",
	ReasonMissingScope:        "invalid bearer token: missing a required scope",
	ReasonBadClaims:           "invalid bearer token: claims unusable (no principal, exp or groups of the right type)",
	ReasonProviderUnreachable: "invalid bearer token: identity provider unreachable",
	ReasonPrincipalTaken:      "invalid bearer token: its principal is the name of a static token or of another issuer's principal (give the issuer a name in auth.oidc)",
}

// String is the metric label.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Reasons lists every refusal reason, for creating each series at 0.
func Reasons() []Reason {
	out := make([]Reason, 0, numReasons-1)
	for r := ReasonMissing; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}

// refusal is the error of a refused token; errors.Is matches ErrInvalid.
type refusal Reason

func (e refusal) Error() string { return reasonTexts[e] }

func (e refusal) Is(target error) bool { return target == ErrInvalid }

// ReasonOf returns why err refused a credential (ReasonNone for nil).
func ReasonOf(err error) Reason {
	switch e := err.(type) {
	case nil:
		return ReasonNone
	case refusal:
		return Reason(e)
	}
	switch err {
	case ErrMissing:
		return ReasonMissing
	case ErrMalformed:
		return ReasonMalformed
	}
	return ReasonUnknownToken
}
