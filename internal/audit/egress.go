package audit

import "github.com/toolnexus/toolnexus/internal/egress"

// EventEgress is a sandboxed command's connection through the egress
// proxy, allowed or refused.
const EventEgress = "egress"

type egressLine struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	Principal string `json:"principal"`
	Session   string `json:"session"`
	Tool      string `json:"tool"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	Addr      string `json:"addr,omitempty"`
	Protocol  string `json:"protocol"`
	Decision  string `json:"decision"`
	Rule      string `json:"rule,omitempty"`
	Reason    string `json:"reason,omitempty"`
	BytesSent int64  `json:"bytes_sent"`
	BytesRecv int64  `json:"bytes_received"`
}

// Egress records one connection a sandboxed command asked the egress
// proxy for: who (principal, session, tool), where (the name asked, the
// port, the address connected to), the decision and the rule that
// refused, and the bytes each way once it closed.
func (l *Log) Egress(r egress.Record) {
	s := l.sink()
	if s == nil {
		return
	}
	decision := "deny"
	if r.Allowed {
		decision = "allow"
	}
	l.emit(s, egressLine{Time: now(), Event: EventEgress, Principal: r.Principal, Session: r.Session, Tool: r.Tool,
		Host: r.Host, Port: r.Port, Addr: r.Addr, Protocol: r.Protocol, Decision: decision, Rule: r.Rule, Reason: r.Reason,
		BytesSent: r.Sent, BytesRecv: r.Received})
}
