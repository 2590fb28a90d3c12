package exchange

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadExchange: a session folder's request, response and delivery log can be written by
// anyone who can write the folder (a worker, a plain procedure, a damaged disk). Loading them
// never panics, and what went wrong is named in Problems or the damaged status, never hidden.
func FuzzLoadExchange(f *testing.F) {
	req := "[WORKER capability=READONLY id=20260101-000000-a1b2 started_at=20260101-000000 orchestrator=%1 worker=%2]\nhello\n"
	resp := "[WORKER RESPONSE id=20260101-000000-a1b2 started_at=20260101-000000 orchestrator=%1 worker=%2]\nanswer\n"
	log := `{"state":"written","at":"2026-01-01T00:00:00Z"}` + "\n" + `{"state":"queued","at":"2026-01-01T00:00:01Z","detail":{"mail":"x"}}` + "\n"
	f.Add(req, resp, log)
	f.Add("", "", "")
	f.Add(req, "no header\n", "{not json\n\n"+strings.Repeat("x", 70000)+"\n")
	f.Add("[WORKER capability=READONLY id=x]\n", resp, `{"state":"submitted","detail":{"verified":"true"}}`)
	f.Fuzz(func(t *testing.T, request, response, delivery string) {
		dir := filepath.Join(t.TempDir(), "20260101-000000-o1-w2")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"001-request.md": request, "002-response.md": response, "001-delivery.jsonl": delivery} {
			if data != "" {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		x := LoadExchange(dir, 1, true)
		switch x.Status {
		case StatusPending, StatusAnswered, StatusUndelivered, StatusDamaged:
		default:
			t.Fatalf("status %q", x.Status)
		}
		if x.Status == StatusDamaged && len(x.Problems) == 0 {
			t.Fatalf("damaged without a word: %+v", x)
		}
		if x.Status == StatusAnswered && x.Response() == nil {
			t.Fatalf("answered without a response")
		}
	})
}
