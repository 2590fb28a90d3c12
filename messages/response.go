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
func ParseResponse(data []byte) (Response, error) {
	first, rest, _ := strings.Cut(string(data), "\n")
	h, err := ParseResponseHeader(strings.TrimSuffix(first, "\r"))
	if err != nil {
		return Response{}, atLine(1, err)
	}
	// The body is kept as text lines: it ends with one newline however many the file has, which
	// is what FormatResponse writes.
	r := Response{Header: h, Body: strings.TrimRight(rest, "\n")}
	if r.Body != "" {
		r.Body += "\n"
	}
	if d, found, err := ParseDelta(r.Body); found && err == nil {
		r.Delta = &d
	}
	return r, nil
}
