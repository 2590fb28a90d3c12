package messages

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for every parser. Each checks: no panic; a failure is an ErrSyntax error; when
// parsing succeeds, formatting the value and parsing again gives the same value. Run one with
//
//	go test -run XXX -fuzz FuzzParseRequest -fuzztime 15s ./messages

func requireSyntax(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrSyntax) {
		t.Fatalf("error %v does not wrap ErrSyntax", err)
	}
}

func FuzzParseRequestHeader(f *testing.F) {
	f.Add(seedRequestHeader)
	f.Add("[WORKER capability=READONLY id=YYYYMMDD-HHMMSS-XXXX started_at=YYYYMMDD-HHMMSS orchestrator=%N worker=%M]")
	f.Add(seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123456789ab]")
	f.Add(seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123456789ab chain=20260117-115900-c0de depth=3]")
	f.Add(seedRequestHeader[:len(seedRequestHeader)-1] + " depth=1 chain=x]")
	f.Add("[WORKER worker=%7 orchestrator=%6 started_at=20260117-120000 id=20260117-120000-a1b2 capability=readonly x=]")
	f.Fuzz(func(t *testing.T, line string) {
		h, err := ParseRequestHeader(line)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		again, err := ParseRequestHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", line, again, err, h)
		}
	})
}

func FuzzParseResponseHeader(f *testing.F) {
	f.Add(seedResponseHeader)
	f.Add("[WORKER RESPONSE id=... started_at=... orchestrator=%N worker=%M]")
	f.Add(seedResponseHeader[:len(seedResponseHeader)-1] + " bytes=10 sha256=abcdefabcdef]")
	f.Fuzz(func(t *testing.T, line string) {
		h, err := ParseResponseHeader(line)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		again, err := ParseResponseHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", line, again, err, h)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(seedSection7))
	f.Add([]byte(FormatRequest(wcommRequest("body\n[RESPONSE INSTRUCTIONS]\nx\n"))))
	f.Add([]byte(FormatRequest(wcommRequest("no newline"))))
	f.Add([]byte(FormatRequest(wcommRequest(""))))
	f.Add([]byte(seedRequestHeader + "\nplain"))
	f.Add([]byte(seedRequestHeader + "\nb\n\n[RESPONSE INSTRUCTIONS]\nNotify via:\nResponse file: /a-response.md\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRequest(data)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		if r.Instructions != (Instructions{}) {
			if err := ValidResponsePath(r.Instructions.ResponsePath); err != nil {
				t.Fatalf("parsed response path %q: %v", r.Instructions.ResponsePath, err)
			}
		}
		out := FormatRequest(r)
		again, err := ParseRequest([]byte(out))
		if err != nil {
			t.Fatalf("parse of formatted %q: %v", out, err)
		}
		if again != r {
			t.Fatalf("round trip of %q:\n got %#v\nwant %#v", data, again, r)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(seedResponseHeader + "\nAll tests pass.\n"))
	f.Add([]byte(seedResponseHeader + "\nDone.\n\n" + seedDelta))
	f.Add([]byte(seedResponseHeader + "\r\nDELTA:\n  changes: [a, \"b, c\"]\n  needs_consult: yes\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResponse(data)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		out := FormatResponse(r)
		again, err := ParseResponse([]byte(out))
		if err != nil {
			t.Fatalf("parse of formatted %q: %v", out, err)
		}
		if again.Header != r.Header || again.Body != r.Body || !sameDelta(again.Delta, r.Delta) {
			t.Fatalf("round trip of %q:\n got %#v\nwant %#v", data, again, r)
		}
	})
}

func sameDelta(a, b *Delta) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.format() == b.format()
}

func FuzzFindNotification(f *testing.F) {
	f.Add(seedNotification)
	f.Add("❯ " + seedNotification + "\r\n")
	f.Add("\x1b[2m❯ \x1b[0m\x1b[1;34m" + seedNotification + "\x1b[0m")
	f.Add("[RESPONSE started_at=YYYYMMDD-HHMMSS orchestrator=%N worker=%M] /tmp/worker-comm/...")
	f.Add(seedNotification + "\n[RESPONSE INSTRUCTIONS]\n")
	f.Fuzz(func(t *testing.T, text string) {
		n, err := FindNotification(text)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		if err := ValidResponsePath(n.Path); err != nil {
			t.Fatalf("found path %q: %v", n.Path, err)
		}
		line := n.String()
		if msg := unsafeText(line, false); msg != "" {
			t.Fatalf("found notification %q: %s", line, msg)
		}
		again, err := FindNotification(line)
		if err != nil || again != n {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", text, again, err, n)
		}
	})
}

func FuzzParseDelta(f *testing.F) {
	f.Add(seedDelta)
	f.Add("Done.\n\nDELTA:\n  changes: [auth.go, \"a, b\"]\n  risks: []\n  alternatives: [x]\n  needs_consult: yes\n")
	f.Add("DELTA:\n  changes:\n    - a\n    - \"b\\\"\"\n  needs_consult: no\n")
	f.Fuzz(func(t *testing.T, body string) {
		d, found, err := ParseDelta(body)
		if err != nil {
			requireSyntax(t, err)
			if !found {
				t.Fatalf("error %v without a DELTA: line", err)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q does not start with line N:", err)
			}
			return
		}
		if !found {
			return
		}
		out := d.format()
		again, found, err := ParseDelta(out)
		if err != nil || !found || again.format() != out {
			t.Fatalf("round trip of %q: %#v, %v, %v; want %#v", body, again, found, err, d)
		}
	})
}

func FuzzParseSessionName(f *testing.F) {
	f.Add("20260117-155000-o6-w7")
	f.Add("20260117-120000-o6-w7")
	f.Add("../20260117-155000-o6-w7")
	f.Add("20260117-155000-o-1-w7")
	f.Fuzz(func(t *testing.T, name string) {
		s, err := ParseSessionName(name)
		if err != nil {
			requireSyntax(t, err)
			return
		}
		if strings.Contains(name, "/") || strings.Contains(name, "..") || strings.ContainsAny(name, "\x00\n\\") {
			t.Fatalf("accepted unsafe folder name %q", name)
		}
		if s.Name() != name {
			t.Fatalf("Name() = %q for %q", s.Name(), name)
		}
		again, err := ParseSessionName(s.Name())
		if err != nil || again != s {
			t.Fatalf("round trip of %q: %+v, %v", name, again, err)
		}
	})
}

func FuzzParseSeqFileName(f *testing.F) {
	f.Add("001-request.md")
	f.Add("002-response.md")
	f.Add("1000-request.md")
	f.Add("0001-request.md")
	f.Fuzz(func(t *testing.T, name string) {
		n, k, ok := ParseSeqFileName(name)
		if !ok {
			return
		}
		if n < 1 || SeqFileName(n, k) != name {
			t.Fatalf("ParseSeqFileName(%q) = %d, %q", name, n, k)
		}
	})
}

func FuzzParsePaneID(f *testing.F) {
	f.Add("%6")
	f.Add("%-1")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePaneID(s)
		if err != nil {
			requireSyntax(t, err)
			if PaneID(s).Num() != -1 {
				t.Fatalf("Num of invalid %q is not -1", s)
			}
			return
		}
		if p.Num() < 0 || "%"+strconv.Itoa(p.Num()) != s {
			t.Fatalf("ParsePaneID(%q) = %q, Num %d", s, p, p.Num())
		}
	})
}

func FuzzSanitize(f *testing.F) {
	f.Add("harmless\x1b[201~\ntouch pwn\n", true)
	f.Add("before\x03after\x04", false)
	f.Add("x\x1b]2;X\x07y", true)
	f.Add("\x1b[1;31mRED\x1b[0m\u009b\x7f\x1b", false)
	f.Add("a\r\nb\rc\xff\t\u202e", true)
	f.Fuzz(func(t *testing.T, s string, keep bool) {
		out := Sanitize(s, keep)
		if msg := unsafeText(out, keep); msg != "" {
			t.Fatalf("Sanitize(%q, %v) = %q: %s", s, keep, out, msg)
		}
		if again := Sanitize(out, keep); again != out {
			t.Fatalf("Sanitize is not idempotent on %q: %q then %q", s, out, again)
		}
	})
}

// FuzzParseMail: a mail or outcome file either parses into a record that validates and survives
// a format/parse round trip, or is refused as malformed; nothing else.
func FuzzParseMail(f *testing.F) {
	m := Mail{ID: "01795573754248449989-1532", Kind: MailResponse, Pane: "%6", Server: "1-2", Session: "20260101-000000-o6-w7",
		Seq: 1, Text: "[RESPONSE x] /p"}
	f.Add(FormatMail(m))
	f.Add(FormatMailOutcome(MailOutcome{Mail: m, State: MailDelivered, Via: "hook"}))
	f.Add([]byte(`{"id":"x","kind":"request"}`))
	f.Add([]byte("{}{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := ParseMail(data); err == nil {
			back, err := ParseMail(FormatMail(m))
			if err != nil || back.ID != m.ID || back.Kind != m.Kind || back.Pane != m.Pane {
				t.Fatalf("round trip of %q: %v %+v", data, err, back)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("error not ErrSyntax: %v", err)
		}
		if o, err := ParseMailOutcome(data); err == nil {
			if _, err := ParseMailOutcome(FormatMailOutcome(o)); err != nil {
				t.Fatalf("round trip of outcome %q: %v", data, err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("outcome error not ErrSyntax: %v", err)
		}
	})
}

// FuzzSanitizeTerminal: what wcomm prints of another process's text holds no control byte a
// terminal acts on (only LF and TAB), whatever the input, and sanitising again changes nothing.
func FuzzSanitizeTerminal(f *testing.F) {
	f.Add("answer\x1b]2;HACKED\x07 done\n")
	f.Add("\x1b[2J\x1b[H\u009b\x7f\t\r\n\u202e\xff\x1b")
	f.Add("\x1bP\x1b\\\x1b_x\x1b")
	f.Fuzz(func(t *testing.T, s string) {
		out := SanitizeTerminal(s)
		if !utf8.ValidString(out) {
			t.Fatalf("SanitizeTerminal(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || removedRune(r) {
				t.Fatalf("SanitizeTerminal(%q) = %q: holds %U", s, out, r)
			}
		}
		if again := SanitizeTerminal(out); again != out {
			t.Fatalf("not idempotent on %q: %q then %q", s, out, again)
		}
	})
}

// FuzzEscapeJSON: escaping encoded JSON for a terminal leaves it valid JSON that decodes to the
// same value, with no raw DEL, C1 control or bidi override left.
func FuzzEscapeJSON(f *testing.F) {
	f.Add("x\x7fy\u009b2J\u202e")
	f.Add("\x1b]2;t\x07")
	f.Fuzz(func(t *testing.T, s string) {
		enc, err := json.Marshal(map[string]string{"s": s})
		if err != nil {
			t.Fatal(err)
		}
		out := EscapeJSON(enc)
		var back, want map[string]string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("EscapeJSON(%q) = %q: not JSON: %v", enc, out, err)
		}
		_ = json.Unmarshal(enc, &want)
		if back["s"] != want["s"] {
			t.Fatalf("EscapeJSON changed the value: %q, want %q", back["s"], want["s"])
		}
		for _, r := range string(out) {
			if r < 0x20 && r != '\n' || r == 0x7f || removedRune(r) {
				t.Fatalf("EscapeJSON(%q) = %q: holds %U", enc, out, r)
			}
		}
	})
}

// fuzzRecord checks a JSON record parser: a failure is an ErrSyntax error, and a parsed record
// formats to text that parses back to the same text.
func fuzzRecord[T any](t *testing.T, data []byte, parse func([]byte) (T, error), format func(T) []byte) {
	v, err := parse(data)
	if err != nil {
		requireSyntax(t, err)
		return
	}
	out := format(v)
	again, err := parse(out)
	if err != nil {
		t.Fatalf("formatted record does not parse: %v\n%s", err, out)
	}
	if got := format(again); string(got) != string(out) {
		t.Fatalf("round trip changed the record:\n%s\nthen\n%s", out, got)
	}
}

func FuzzParseIntent(f *testing.F) {
	f.Add(FormatIntent(seedIntent()))
	f.Add([]byte(`{"question_id":"t.q1-abcd","action":"x","definition":{"run":["a"],"dir":"/"}}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRecord(t, data, ParseIntent, FormatIntent) })
}

func FuzzParseDispatch(f *testing.F) {
	f.Add(FormatDispatch(seedDispatch()))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRecord(t, data, ParseDispatch, FormatDispatch) })
}

func FuzzParseActionResult(f *testing.F) {
	f.Add(FormatActionResult(seedResult()))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRecord(t, data, ParseActionResult, FormatActionResult) })
}

func FuzzParseTrustList(f *testing.F) {
	f.Add(FormatTrustList(TrustList{}.With("/p/.wcomm.yaml", ContentSHA256([]byte("x")), seedTime)))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRecord(t, data, ParseTrustList, FormatTrustList) })
}

func FuzzSplitTargets(f *testing.F) {
	f.Add("%3,codex,gpu1:%2")
	f.Add(" @reviewers , %4")
	f.Add(",,")
	f.Fuzz(func(t *testing.T, list string) {
		got, err := SplitTargets([]string{list})
		if err != nil {
			requireSyntax(t, err)
			return
		}
		// What it returns is a list it reads back as itself: no target holds a comma or a space.
		again, err := SplitTargets([]string{strings.Join(got, ",")})
		if err != nil || strings.Join(again, "\x00") != strings.Join(got, "\x00") {
			t.Fatalf("round trip of %q: %q, %v; want %q", list, again, err, got)
		}
	})
}

func FuzzValidBroadcastID(f *testing.F) {
	f.Add("bc-20260117-120000-1a2b3c4d")
	f.Add("bc-../x")
	f.Fuzz(func(t *testing.T, s string) {
		if err := ValidBroadcastID(s); err != nil {
			requireSyntax(t, err)
			return
		}
		// A valid id is a plain file name: it is joined to a folder of the root.
		if strings.ContainsAny(s, "/\x00.") || !IsBroadcastID(s) {
			t.Fatalf("%q passed", s)
		}
	})
}
