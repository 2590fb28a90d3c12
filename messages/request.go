package messages

import (
	"strings"
)

// Instructions are what a request tells its worker about answering.
type Instructions struct {
	ResponsePath string // absolute path of the response file
	// Notify is the one-line wcomm command a worker with wcomm runs, e.g.
	// "wcomm notify --response PATH --file ANSWER.md".
	Notify string
	// Fallback is the seed's plain tmux notify command line for workers without wcomm.
	Fallback string
}

// Request is a whole request file.
type Request struct {
	Header       RequestHeader
	Body         string
	Instructions Instructions
}

// The fixed lines of the instructions block.
const (
	instructionsLine = "[RESPONSE INSTRUCTIONS]"
	responseFileKey  = "Response file:"
	notifyViaLine    = "Notify via:"
	withoutLine      = "Without wcomm, write the response file with the header line"
	andNotifyLine    = "and notify via:"
)

// FormatRequest renders a request file:
//
//	HEADER
//	BODY
//
//	[RESPONSE INSTRUCTIONS]
//	Response file: PATH
//	Notify via:
//	NOTIFY            (only when Instructions.Notify is set)
//	Without wcomm, write the response file with the header line
//	[WORKER RESPONSE id=... started_at=... orchestrator=%N worker=%M]
//	and notify via:
//	FALLBACK
//
// When Notify is empty, "Notify via:" is followed directly by FALLBACK (the seed's exact form).
// The body is written as given (a trailing newline is not doubled).
func FormatRequest(r Request) string {
	head, tail := FormatRequestAround(r, r.Body != "" && !strings.HasSuffix(r.Body, "\n"))
	return head + r.Body + tail
}

// FormatRequestAround is FormatRequest without the body: what goes before it and after it, so a
// large body can be written from where it is, never copied into one string. r.Body is not read;
// openEnd says the body is not empty and does not end in a newline.
func FormatRequestAround(r Request, openEnd bool) (head, tail string) {
	var b strings.Builder
	in := r.Instructions
	head = r.Header.String() + "\n"
	// Without instructions there is no block, so that ParseRequest's "no block" case round-trips.
	if in == (Instructions{}) {
		return head, ""
	}
	b.Grow(len(in.ResponsePath) + len(in.Notify) + len(in.Fallback) + 512)
	if openEnd {
		b.WriteByte('\n')
	}
	b.WriteString("\n" + instructionsLine + "\n")
	b.WriteString(responseFileKey + " " + in.ResponsePath + "\n")
	b.WriteString(notifyViaLine + "\n")
	if in.Notify != "" {
		rh := ResponseHeader{
			ID:           r.Header.ID,
			StartedAt:    r.Header.StartedAt,
			Orchestrator: r.Header.Orchestrator,
			Worker:       r.Header.Worker,
			RequestBytes: -1, // a worker without wcomm computes no integrity echo
		}
		b.WriteString(in.Notify + "\n")
		b.WriteString(withoutLine + "\n")
		b.WriteString(rh.String() + "\n")
		b.WriteString(andNotifyLine + "\n")
	}
	b.WriteString(in.Fallback + "\n")
	return head, b.String()
}

// ParseRequest parses a request file written by FormatRequest or by the seed's plain procedure:
// the header is the first line; the body runs up to the last "\n[RESPONSE INSTRUCTIONS]\n" line
// (one blank line before it is not part of the body); "Response file: PATH" is read from the block.
// A file without the block parses with an empty Instructions and the whole rest as body.
func ParseRequest(data []byte) (Request, error) { return ParseRequestText(string(data)) }

// ParseRequestText is ParseRequest of a file already held as a string: the body is a part of s,
// not a copy.
func ParseRequestText(s string) (Request, error) {
	first, rest, hasRest := strings.Cut(s, "\n")
	// A header written by an editor with CRLF line ends is still the same header.
	h, err := ParseRequestHeader(strings.TrimSuffix(first, "\r"))
	if err != nil {
		return Request{}, atLine(1, err)
	}
	r := Request{Header: h}
	if !hasRest {
		return r, nil
	}
	at := lastInstructionsLine(rest)
	if at < 0 {
		r.Body = rest
		return r, nil
	}
	r.Body = bodyBefore(rest[:at], h)
	blockLine := 2 + strings.Count(rest[:at], "\n") // line number of "[RESPONSE INSTRUCTIONS]"
	block := strings.TrimSuffix(rest[at+len(instructionsLine):], "\n")
	block = strings.TrimPrefix(block, "\n")
	r.Instructions, err = parseInstructions(block, blockLine)
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// lastInstructionsLine returns the offset in rest of the last line that reads exactly
// "[RESPONSE INSTRUCTIONS]", or -1. The last one counts so that a body may quote the marker.
func lastInstructionsLine(rest string) int {
	end := len(rest)
	for {
		i := strings.LastIndex(rest[:end], instructionsLine)
		if i < 0 {
			return -1
		}
		after := i + len(instructionsLine)
		if (i == 0 || rest[i-1] == '\n') && (after == len(rest) || rest[after] == '\n') {
			return i
		}
		end = i
	}
}

// bodyBefore returns the body from the text before the instructions line (empty or ending in a
// newline). FormatRequest ends a body with a newline and one blank line, so "abc" and "abc\n"
// look the same on disk; the integrity fields decide: when they match the body without its last
// newline, that is the body that was sent.
func bodyBefore(pre string, h RequestHeader) string {
	body := pre
	switch {
	case pre == "\n":
		body = ""
	case strings.HasSuffix(pre, "\n\n"):
		body = pre[:len(pre)-1]
	}
	if h.Bytes >= 0 && len(body) == h.Bytes+1 && strings.HasSuffix(body, "\n") {
		if n, sum := BodySumText(body[:h.Bytes]); n == h.Bytes && sum == h.Sum {
			return body[:h.Bytes]
		}
	}
	return body
}

// parseInstructions reads the lines after "[RESPONSE INSTRUCTIONS]". The two shapes FormatRequest
// writes are read whole; any other shape (an orchestrator that wrote the block by hand) yields the
// response path and the line after "Notify via:" as the fallback.
func parseInstructions(block string, markerLine int) (Instructions, error) {
	lines := strings.Split(block, "\n")
	pathAt := -1
	for i, l := range lines {
		if strings.HasPrefix(l, responseFileKey) {
			pathAt = i
			break
		}
	}
	if pathAt < 0 {
		return Instructions{}, atLine(markerLine, syntaxf("%s has no %q line; the worker cannot know where to answer", instructionsLine, responseFileKey+" PATH"))
	}
	var in Instructions
	in.ResponsePath = strings.TrimSpace(strings.TrimPrefix(lines[pathAt], responseFileKey))
	if err := ValidResponsePath(in.ResponsePath); err != nil {
		return Instructions{}, atLine(markerLine+1+pathAt, err)
	}
	if pathAt == 0 && len(lines) >= 2 && lines[1] == notifyViaLine {
		switch {
		case len(lines) == 3:
			in.Fallback = lines[2]
			return in, nil
		case len(lines) == 7 && lines[3] == withoutLine && lines[5] == andNotifyLine:
			in.Notify, in.Fallback = lines[2], lines[6]
			return in, nil
		}
	}
	for i, l := range lines {
		if l == notifyViaLine && i+1 < len(lines) {
			in.Fallback = lines[i+1]
			break
		}
	}
	return in, nil
}

// FallbackCommand returns the seed's notify command for a response path:
//
//	tmux load-buffer -b "msg-o6-w7" - <<< "[RESPONSE started_at=... orchestrator=%6 worker=%7] PATH" && tmux paste-buffer -b "msg-o6-w7" -t %6 && sleep 0.2 && tmux send-keys -t %6 Enter
func FallbackCommand(s Session, responsePath string) string {
	n := Notification{StartedAt: s.StartedAt, Orchestrator: s.Orchestrator, Worker: s.Worker, Path: responsePath}
	buf := s.BufferName()
	pane := string(s.Orchestrator)
	return `tmux load-buffer -b "` + buf + `" - <<< "` + doubleQuoted(n.String()) + `" && ` +
		`tmux paste-buffer -b "` + buf + `" -t ` + pane + ` && sleep 0.2 && ` +
		`tmux send-keys -t ` + pane + ` Enter`
}

// doubleQuoted escapes what bash expands inside double quotes. A path that passes
// ValidResponsePath has none of these characters, so the seed's line is unchanged; the escaping
// only keeps an odd temp root from running code in the worker's shell.
func doubleQuoted(s string) string {
	if !strings.ContainsAny(s, "\\\"$`") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '"', '$', '`':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
