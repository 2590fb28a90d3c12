package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/messages"
)

// webhook posts one JSON object per new question to a URL (an ntfy topic, a chat's incoming
// webhook, a script of one's own). It takes no answers: it only tells.
type webhook struct {
	url  string
	http *http.Client
}

func newWebhook(cfg messages.WebhookConfig) (*webhook, error) {
	if err := tokens.Webhook(cfg); err != nil {
		return nil, err
	}
	return &webhook{url: cfg.URL, http: &http.Client{Timeout: 20 * time.Second}}, nil
}

func (w *webhook) Name() string { return "webhook" }

// WebhookPayload is the JSON object posted for a question.
type WebhookPayload struct {
	Event string `json:"event"` // "question"
	Question
	Answer string `json:"answer_with"` // the command that answers it from a shell
	// Clipped says the question's text, context and options were clipped to bound the post;
	// 'wcomm questions' shows them whole.
	Clipped bool `json:"clipped,omitempty"`
}

// maxWebhookBody bounds what one post sends: a valid question's JSON is well under it.
const maxWebhookBody = 64 << 10

// Post sends the question once; the bridge records that it did, so a restart does not post it
// again.
func (w *webhook) Post(ctx context.Context, q Question) (string, error) {
	p := WebhookPayload{Event: "question", Question: q, Answer: "wcomm answer " + q.ID + " ANSWER"}
	if body, err := json.Marshal(p); err == nil && len(body) > maxWebhookBody {
		p.Text, p.Context, p.Clipped = shorten(q.Text, 1000), shorten(q.Context, 200), true
		p.Options = make([]string, len(q.Options))
		for i, o := range q.Options {
			p.Options[i] = shorten(o, 100)
		}
	}
	return w.send(ctx, p)
}

// send posts v as JSON, at most maxWebhookBody bytes; a 429 says when to try again, another 4xx
// refuses the post for good.
func (w *webhook) send(ctx context.Context, v any) (string, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if len(body) > maxWebhookBody {
		return "", &RefusedError{Err: fmt.Errorf("webhook: the post would be %d bytes, more than %d", len(body), maxWebhookBody)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("webhook: cannot build the request; check channels.webhook.url")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.http.Do(req)
	if err != nil {
		// The URL may carry a secret (a topic name, a key in the query): never quote it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("webhook: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return "", &RetryError{After: time.Duration(after) * time.Second, Err: fmt.Errorf("webhook: HTTP 429")}
	case refusesPost(resp.StatusCode):
		return "", &RefusedError{Err: fmt.Errorf("webhook: HTTP %d", resp.StatusCode)}
	case resp.StatusCode >= 300:
		return "", fmt.Errorf("webhook: HTTP %d", resp.StatusCode)
	}
	return "posted", nil
}

// Notify posts a dead letter as one JSON object (event "dead-letter"); the bridge records that
// it did, so a restart does not post it again.
func (w *webhook) Notify(ctx context.Context, n Notice) error {
	_, err := w.send(ctx, n)
	return err
}

// Close does nothing: a webhook post cannot be changed.
func (w *webhook) Close(context.Context, Question, string, Outcome) error { return nil }

// Receive returns at once: a webhook takes no answers.
func (w *webhook) Receive(context.Context) error { return nil }

// Check only checks the address: a POST would post.
func (w *webhook) Check(context.Context) []Check {
	return []Check{{Channel: "webhook", What: "url", OK: true, Detail: "an http(s) address (not called: a call would post)"}}
}
