package exchange

import "github.com/wcomm/wcomm/messages"

// DeliveryState is the exchange's delivery state as a person reads it ("submitted, verified",
// "submitted via socket") and, apart, its evidence, sanitized ("" where none is worth saying):
// apart, so a listing puts the evidence in one pair of parentheses and show on a line of its own,
// never parentheses within parentheses.
func (x *Exchange) DeliveryState() (state, evidence string) {
	if x.State == "" {
		return "-", ""
	}
	ev := messages.SanitizeField(x.Evidence)
	switch {
	case ev == "" || x.State == StateAnswered || x.State == StateRead:
		return x.State, ""
	case x.State == StateSubmitted && x.Via == ViaSocket:
		return x.State + " via socket", ev
	case x.State == StateSubmitted && x.Verified:
		return x.State + ", verified", ev
	case x.State == StateSubmitted:
		return x.State + ", unverified", ev
	}
	return x.State, ev
}
