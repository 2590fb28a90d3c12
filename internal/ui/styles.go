package ui

import (
	"charm.land/lipgloss/v2"

	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// styles are the console's looks. Without colour (NO_COLOR) only bold and reverse remain, so the
// selection and the states that call for a person still stand out.
type styles struct {
	title, head, dim, sel, warn, bad, key lipgloss.Style
	state                                 map[string]lipgloss.Style
}

func newStyles(color bool) styles {
	s := lipgloss.NewStyle
	st := styles{
		title: s().Bold(true), head: s().Bold(true), dim: s(), sel: s().Reverse(true),
		warn: s().Bold(true), bad: s().Bold(true), key: s().Bold(true),
		state: map[string]lipgloss.Style{
			fleet.PaneAnswer: s().Bold(true), fleet.PanePermission: s().Bold(true),
			fleet.PaneTyping: s().Bold(true),
		},
	}
	if !color {
		return st
	}
	c := lipgloss.Color
	st.dim = s().Foreground(c("8"))
	st.warn = s().Foreground(c("3")).Bold(true)
	st.bad = s().Foreground(c("1")).Bold(true)
	st.key = s().Foreground(c("6")).Bold(true)
	st.title = s().Foreground(c("6")).Bold(true)
	st.state = map[string]lipgloss.Style{
		fleet.PaneIdle:       s().Foreground(c("2")),
		fleet.PaneBusy:       s().Foreground(c("4")),
		fleet.PaneTyping:     s().Foreground(c("3")).Bold(true),
		fleet.PaneAnswer:     s().Foreground(c("5")).Bold(true),
		fleet.PanePermission: s().Foreground(c("5")).Bold(true),
		fleet.PaneStarting:   s().Foreground(c("6")),
		fleet.PaneGone:       s().Foreground(c("1")),
		fleet.PaneUnknown:    s().Foreground(c("8")),
	}
	return st
}

// stateStyle is the look of a pane state or a feed event.
func (st styles) stateStyle(name string) lipgloss.Style {
	if s, ok := st.state[name]; ok {
		return s
	}
	switch name {
	case exchange.StateRefused, exchange.StateUndelivered, exchange.StateExpired, exchange.StateUndeliverable,
		exchange.StateNotifyLost, exchange.StateNotifyExpired, exchange.StateNotifyUndeliverable, watch.EventAnswerInvalid:
		return st.bad
	case exchange.StateQueued, exchange.StateNotifyQueued, exchange.StateHeld, watch.EventAsked:
		return st.warn
	}
	return lipgloss.NewStyle()
}
