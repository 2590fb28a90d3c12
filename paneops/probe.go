package paneops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/profile"
)

// ProbeResult is one live measurement of a pane: how long a pasted marker took to show.
type ProbeResult struct {
	Marker string `json:"marker"`
	// ShownAfter is the time from the paste's tmux call returning to the marker on screen; 0 when
	// it never showed.
	ShownAfter time.Duration `json:"shown_after_ns"`
	Erased     bool          `json:"erased"`
}

// probeTimeout bounds the wait for a probe marker to show and to go again.
const probeTimeout = 3 * time.Second

// Probe measures how long a paste takes to show in a pane, without submitting anything: under the
// pane's lock, and only into an input box that is empty (d.Profile's checks, up to d.BusyWait), it
// pastes a one-line marker with no Enter, waits for it on screen, then erases exactly its
// characters with BackSpace and waits for them to go. Escape, Ctrl-C and Enter are never sent, so
// a live agent starts no turn and a shell runs nothing. The time until the marker shows is what an
// Enter sent earlier could overtake. A profile without a way to see the text (generic) is refused:
// an unknown program may act on any key.
func (c *Client) Probe(ctx context.Context, d Delivery) (ProbeResult, error) {
	var res ProbeResult
	p := d.Profile
	if p == nil || p.Kind == profile.KindGeneric {
		return res, errors.New("no probe for an unknown program: a paste or a BackSpace may do anything there; force a profile with --agent if you know it")
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	res.Marker = "wcomm-probe-" + hex.EncodeToString(b[:])
	timeout := d.LockTimeout
	if timeout == 0 {
		timeout = defaultLockTimeout
	}
	unlock, err := lock.Pane(ctx, d.LockDir, d.LockKey, d.Pane, timeout)
	if err != nil {
		return res, fmt.Errorf("probe pane %s: %w", d.Pane, err)
	}
	defer unlock()
	var dr DeliveryResult
	if err := c.awaitBox(ctx, d, &dr); err != nil {
		return res, err
	}
	buffer := newBufferName()
	out, err := c.Run(ctx, bytes.NewReader([]byte(res.Marker)), guardArgs(d.Pane, buffer, "", false)...)
	if err != nil {
		return res, c.dropBuffer(ctx, buffer, fmt.Errorf("probe pane %s: %w", d.Pane, err))
	}
	if strings.TrimSpace(out) != "" {
		return res, fmt.Errorf("probe pane %s: %w: the pane is dead or its input is off", d.Pane, ErrRefused)
	}
	pasted := time.Now()
	shows := func() (bool, error) {
		s, err := c.Screen(ctx, d.Pane)
		if err != nil {
			return false, err
		}
		for _, l := range s.Lines {
			if strings.Contains(l.Text, res.Marker) {
				return true, nil
			}
		}
		return false, nil
	}
	for deadline := pasted.Add(probeTimeout); time.Now().Before(deadline); {
		ok, err := shows()
		if err != nil {
			return res, fmt.Errorf("probe pane %s: read its screen: %w", d.Pane, err)
		}
		if ok {
			res.ShownAfter = max(time.Since(pasted), time.Microsecond)
			break
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return res, err
		}
	}
	// Erase what was pasted even when it never showed: in a cooked terminal with echo off it is in
	// the line buffer all the same, and BackSpace (VERASE) removes it there too.
	n := strconv.Itoa(utf8.RuneCountInString(res.Marker))
	if _, err := c.Run(ctx, nil, "send-keys", "-t", string(d.Pane), "-N", n, "BSpace"); err != nil {
		return res, fmt.Errorf("probe pane %s: erase the marker %s: %w; remove it by hand", d.Pane, res.Marker, err)
	}
	for deadline := time.Now().Add(probeTimeout); time.Now().Before(deadline); {
		ok, err := shows()
		if err != nil {
			return res, fmt.Errorf("probe pane %s: read its screen: %w", d.Pane, err)
		}
		if !ok {
			res.Erased = true
			break
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return res, err
		}
	}
	if !res.Erased {
		return res, fmt.Errorf("probe pane %s: the marker %s is still on screen after BackSpace; remove it by hand", d.Pane, res.Marker)
	}
	return res, nil
}
