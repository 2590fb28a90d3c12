package messages

import "strings"

// Response is a whole response file.
type Response struct {
	Header ResponseHeader
	Body   string
	Delta  *Delta // parsed from the body when it holds a DELTA: block, else nil
}

// FormatResponse renders HEADER "\n" BODY, ending with exactly one newline.
func FormatResponse(r Response) string {
	body := strings.TrimRight(r.Body, "\n")
	if body == "" {
		return r.Header.String() + "\n"
	}
	return r.Header.String() + "\n" + body + "\n"
}

// ParseResponse parses a response file: header line, then the body. Delta is filled when the body
// holds a DELTA block; a malformed DELTA block is not an error for the response (Delta stays nil).
func ParseResponse(data []byte) (Response, error) { return ParseResponseText(string(data)) }

// ParseResponseText is ParseResponse of a file already held as a string: the body is a part of
// s, not a copy, unless a newline has to be added at its end.
func ParseResponseText(s string) (Response, error) {
	first, rest, _ := strings.Cut(s, "\n")
	h, err := ParseResponseHeader(strings.TrimSuffix(first, "\r"))
	if err != nil {
		return Response{}, atLine(1, err)
	}
	// The body is kept as text lines: it ends with one newline however many the file has, which
	// is what FormatResponse writes.
	r := Response{Header: h}
	switch trimmed := strings.TrimRight(rest, "\n"); {
	case trimmed == "":
	case len(trimmed) < len(rest):
		r.Body = rest[:len(trimmed)+1]
	default:
		r.Body = trimmed + "\n"
	}
	if d, found, err := ParseDelta(r.Body); found && err == nil {
		r.Delta = &d
	}
	return r, nil
}
