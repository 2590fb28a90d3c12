package messages

import (
	"strings"
	"testing"
)

func BenchmarkParseRequest(b *testing.B) {
	line := "Implement the authentication module as specified in the plan; keep the tests green.\n"
	body := strings.Repeat(line, 10*1024/len(line)+1)[:10*1024]
	data := []byte(FormatRequest(wcommRequest(body)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRequest(data); err != nil {
			b.Fatal(err)
		}
	}
}

// claudeScreen is a captured Claude Code screen (about 2 KB) with colour codes and the
// notification near the bottom.
var claudeScreen = strings.Repeat("\x1b[2m●\x1b[0m Reading auth.go and writing the tests for the new module…\r\n", 20) +
	"\x1b[1m❯\x1b[0m " + seedNotification + "\r\n" +
	"────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n  ? for shortcuts\r\n"

func BenchmarkFindNotification(b *testing.B) {
	b.SetBytes(int64(len(claudeScreen)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FindNotification(claudeScreen); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindNotificationHostile is 1 MB of "[RESPONSE " without a valid line: the bounds in
// parseNotificationAt keep it linear.
func BenchmarkFindNotificationHostile(b *testing.B) {
	text := strings.Repeat("[RESPONSE ", 100*1024)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := FindNotification(text); err == nil {
			b.Fatal("found a notification in garbage")
		}
	}
}

func BenchmarkSanitize(b *testing.B) {
	chunk := "plain text line with some words, numbers 12345 and unicode ❯ é 世界\t\x1b[1;31mred\x1b[0m\r\n"
	s := strings.Repeat(chunk, 100*1024/len(chunk)+1)[:100*1024]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Sanitize(s, true)
	}
}

func BenchmarkSanitizePlainASCII(b *testing.B) {
	s := strings.Repeat("plain ascii text that needs no change\n", 100*1024/38+1)[:100*1024]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Sanitize(s, true)
	}
}

func BenchmarkParseDelta(b *testing.B) {
	body := strings.Repeat("Some prose about the change that was made.\n", 40) +
		"\nDELTA:\n  changes: [auth.go, auth_test.go, \"docs, README\"]\n  risks: [token reuse]\n" +
		"  alternatives:\n    - keep sessions\n    - use JWT\n  needs_consult: no\n"
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, found, err := ParseDelta(body); err != nil || !found {
			b.Fatal(found, err)
		}
	}
}
