package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// RequestHeader is the first line of a request file:
//
//	[WORKER capability=READONLY id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]
//
// wcomm appends two integrity fields after the seed's five: "bytes=N sha256=HEX12" (the body's length
// in bytes and the first 12 hex digits of its SHA-256). A header without them (the seed's own) parses
// with Bytes = -1 and Sum = "".
//
// A request sent by a worker while it handles another carries that request's chain after them:
// "chain=ID depth=N", the id of the request that began the chain (ValidID) and how far down it
// this request is (2 and more). A request without them begins a chain of its own: its chain is
// its own id, its depth 1 (Chain "", Depth 0; ChainID and ChainDepth say so).
type RequestHeader struct {
	Capability   Capability
	ID           string
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	Bytes        int    // -1 when absent
	Sum          string // "" when absent
	Chain        string // "" when absent: the request begins its own chain
	Depth        int    // 0 when absent
}

// ChainID is the id of the chain the request is part of: its own id when it begins one.
func (h RequestHeader) ChainID() string {
	if h.Chain != "" {
		return h.Chain
	}
	return h.ID
}

// ChainDepth is how far down its chain the request is: 1 when it begins one.
func (h RequestHeader) ChainDepth() int { return max(h.Depth, 1) }

// maxDepthDigits bounds depth=: a chain a million requests deep is long past any cap.
const maxDepthDigits = 6

const (
	requestPrefix  = "[WORKER "
	responsePrefix = "[WORKER RESPONSE "
	requestForm    = "[WORKER capability=READONLY|WRITABLE id=... started_at=... orchestrator=%N worker=%M]"
	responseForm   = "[WORKER RESPONSE id=... started_at=... orchestrator=%N worker=%M]"
	sumDigits      = 12
)

// String formats the header line (no newline). Integrity fields are written only when Bytes >= 0.
func (h RequestHeader) String() string {
	var b strings.Builder
	b.WriteString(requestPrefix)
	b.WriteString("capability=" + string(h.Capability))
	b.WriteString(" id=" + h.ID)
	b.WriteString(" started_at=" + h.StartedAt)
	b.WriteString(" orchestrator=" + string(h.Orchestrator))
	b.WriteString(" worker=" + string(h.Worker))
	writeIntegrity(&b, h.Bytes, h.Sum)
	if h.Chain != "" {
		b.WriteString(" chain=" + h.Chain + " depth=" + strconv.Itoa(h.Depth))
	}
	b.WriteString("]")
	return b.String()
}

func writeIntegrity(b *strings.Builder, n int, sum string) {
	if n >= 0 {
		b.WriteString(" bytes=" + strconv.Itoa(n) + " sha256=" + sum)
	}
}

// ParseRequestHeader parses a header line. Fields are key=value separated by single spaces, in any
// order; the five seed fields are required and validated (ValidID, ValidStamp, ParsePaneID,
// ParseCapability); bytes and sha256 are optional, and so are chain and depth; unknown keys are
// ignored (forward compatible).
func ParseRequestHeader(line string) (RequestHeader, error) {
	f, err := headerFields(line, requestPrefix, "request header", requestForm)
	if err != nil {
		return RequestHeader{}, err
	}
	h := RequestHeader{Bytes: -1}
	capa, err := f.need("capability")
	if err == nil {
		h.Capability, err = ParseCapability(capa)
	}
	if err == nil {
		h.ID, h.StartedAt, h.Orchestrator, h.Worker, err = f.common()
	}
	if err == nil {
		h.Bytes, h.Sum, err = f.integrity()
	}
	if err == nil {
		h.Chain, h.Depth, err = f.chain()
	}
	if err != nil {
		return RequestHeader{}, syntaxf("request header: %v (want %s)", err, requestForm)
	}
	return h, nil
}

// BodySum returns the integrity fields for a body: its length and the 12-hex-digit SHA-256 prefix.
func BodySum(body []byte) (n int, sum string) {
	s := sha256.Sum256(body)
	return len(body), hex.EncodeToString(s[:])[:sumDigits]
}

// BodySumText is BodySum of a string, without a copy of it: a body may be megabytes.
func BodySumText(body string) (n int, sum string) {
	h := sha256.New()
	const chunk = 64 << 10
	var buf [chunk]byte
	for i := 0; i < len(body); i += chunk {
		k := copy(buf[:], body[i:min(i+chunk, len(body))])
		h.Write(buf[:k])
	}
	return len(body), hex.EncodeToString(h.Sum(nil))[:sumDigits]
}

// ResponseHeader is the first line of a response file:
//
//	[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]
//
// wcomm may append "bytes=N sha256=HEX12" of the request body the worker saw (its integrity echo).
type ResponseHeader struct {
	ID           string
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	RequestBytes int    // -1 when absent
	RequestSum   string // "" when absent
}

// String formats the header line (no newline).
func (h ResponseHeader) String() string {
	var b strings.Builder
	b.WriteString(responsePrefix)
	b.WriteString("id=" + h.ID)
	b.WriteString(" started_at=" + h.StartedAt)
	b.WriteString(" orchestrator=" + string(h.Orchestrator))
	b.WriteString(" worker=" + string(h.Worker))
	writeIntegrity(&b, h.RequestBytes, h.RequestSum)
	b.WriteString("]")
	return b.String()
}

// ParseResponseHeader parses a response header line (same field rules as ParseRequestHeader).
func ParseResponseHeader(line string) (ResponseHeader, error) {
	f, err := headerFields(line, responsePrefix, "response header", responseForm)
	if err != nil {
		return ResponseHeader{}, err
	}
	h := ResponseHeader{RequestBytes: -1}
	h.ID, h.StartedAt, h.Orchestrator, h.Worker, err = f.common()
	if err == nil {
		h.RequestBytes, h.RequestSum, err = f.integrity()
	}
	if err != nil {
		return ResponseHeader{}, syntaxf("response header: %v (want %s)", err, responseForm)
	}
	return h, nil
}

// fields holds a header's key=value pairs.
type fields map[string]string

// headerFields checks the frame "PREFIX k=v k=v]" of a header line and splits its fields. what and
// form name the line in errors.
func headerFields(line, prefix, what, form string) (fields, error) {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 || c == 0x7f {
			return nil, syntaxf("%s has control byte %#02x at column %d; a header is one line of printable text", what, c, i+1)
		}
	}
	inner, ok := strings.CutPrefix(line, prefix)
	if ok {
		inner, ok = strings.CutSuffix(inner, "]")
	}
	if !ok {
		return nil, syntaxf("%s %s does not read %s...] (want %s)", what, quote(line), prefix, form)
	}
	f, err := splitFields(inner, true)
	if err != nil {
		return nil, syntaxf("%s %s: %v (want %s)", what, quote(line), err, form)
	}
	return f, nil
}

// splitFields splits "k=v k=v" at single spaces (strict) or at any run of white space (screen
// text, where a TUI may have re-spaced the line). A repeated key is an error: two values for one
// field would let the writer and the reader of a line disagree about which one counts.
func splitFields(s string, strict bool) (fields, error) {
	parts := strings.Fields(s)
	if strict {
		parts = strings.Split(s, " ")
	}
	f := make(fields, len(parts))
	for _, p := range parts {
		if p == "" {
			return nil, syntaxf("fields must be separated by single spaces")
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, syntaxf("field %s is not key=value", quote(p))
		}
		if _, dup := f[k]; dup {
			return nil, syntaxf("field %s appears twice", k)
		}
		f[k] = v
	}
	return f, nil
}

func (f fields) need(key string) (string, error) {
	v, ok := f[key]
	if !ok {
		return "", syntaxf("missing %s=", key)
	}
	return v, nil
}

// common parses the four fields every header and notification carries.
func (f fields) common() (id, startedAt string, orch, worker PaneID, err error) {
	if id, err = f.need("id"); err != nil {
		return
	}
	if err = ValidID(id); err != nil {
		return
	}
	startedAt, orch, worker, err = f.pair()
	return
}

// pair parses started_at, orchestrator and worker: the fields that name a session.
func (f fields) pair() (startedAt string, orch, worker PaneID, err error) {
	if startedAt, err = f.need("started_at"); err != nil {
		return
	}
	if err = ValidStamp(startedAt); err != nil {
		return
	}
	var s string
	if s, err = f.need("orchestrator"); err != nil {
		return
	}
	if orch, err = ParsePaneID(s); err != nil {
		return
	}
	if s, err = f.need("worker"); err != nil {
		return
	}
	worker, err = ParsePaneID(s)
	return
}

// maxBodyDigits bounds bytes= far below int overflow (10^15 bytes is far beyond any message).
const maxBodyDigits = 15

// integrity parses the optional bytes= and sha256= pair. They come together or not at all: one
// without the other cannot be checked, and String writes both or neither.
func (f fields) integrity() (n int, sum string, err error) {
	bs, hasBytes := f["bytes"]
	sum, hasSum := f["sha256"]
	switch {
	case !hasBytes && !hasSum:
		return -1, "", nil
	case hasBytes != hasSum:
		return 0, "", syntaxf("bytes= and sha256= must come together")
	}
	if !canonicalNumber(bs, maxBodyDigits) {
		return 0, "", syntaxf("bytes=%s is not a byte count", quote(bs))
	}
	if len(sum) != sumDigits || !isLowerHex(sum) {
		return 0, "", syntaxf("sha256=%s is not %d lowercase hex digits", quote(sum), sumDigits)
	}
	n, err = strconv.Atoi(bs)
	if err != nil {
		return 0, "", syntaxf("bytes=%s: %v", quote(bs), err)
	}
	return n, sum, nil
}

// chain parses the optional chain= and depth= pair: together or not at all, the chain an id and
// the depth 2 or more (a request at depth 1 begins its chain and writes neither).
func (f fields) chain() (chain string, depth int, err error) {
	c, hasChain := f["chain"]
	d, hasDepth := f["depth"]
	switch {
	case !hasChain && !hasDepth:
		return "", 0, nil
	case hasChain != hasDepth:
		return "", 0, syntaxf("chain= and depth= must come together")
	}
	if err := ValidID(c); err != nil {
		return "", 0, syntaxf("chain=%s: %v", quote(c), err)
	}
	if !canonicalNumber(d, maxDepthDigits) {
		return "", 0, syntaxf("depth=%s is not a number of requests", quote(d))
	}
	depth, err = strconv.Atoi(d)
	if err != nil || depth < 2 {
		return "", 0, syntaxf("depth=%s: a chained request is at depth 2 or more", quote(d))
	}
	return c, depth, nil
}
