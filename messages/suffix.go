package messages

import (
	"regexp"
	"sync"
)

// The shapes of an id's tail: a person names an exchange or a question by the unique end of its
// id ("a1b2" for 20260117-120000-a1b2, "q1-9232" for task-3.q1-9232); the room that owns the
// ids finds the one it ends.

// maxSuffix bounds a tail: longer than any id, so not one.
const maxSuffix = 96

// IsIDSuffix reports whether s can be the tail of a request id without being one whole: digits,
// lowercase hex letters and '-' only, and not a broadcast's id.
func IsIDSuffix(s string) bool {
	return s != "" && len(s) <= maxSuffix && ValidID(s) != nil && !IsBroadcastID(s) &&
		onlyBytes(s, func(c byte) bool { return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f' })
}

// IsQuestionIDSuffix reports whether s can be the tail of a question id (TASK.qN-xxxx) without
// being one whole: up to 4 hex digits, or "-" and the 4 before it, after the end of "TASK.qN".
func IsQuestionIDSuffix(s string) bool {
	if s == "" || len(s) > maxSuffix {
		return false
	}
	if _, err := ParseQuestionID(s); err == nil {
		return false
	}
	hex := func(t string) bool {
		return onlyBytes(t, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' })
	}
	if len(s) <= 4 {
		return hex(s)
	}
	head := s[:len(s)-5]
	return s[len(s)-5] == '-' && hex(s[len(s)-4:]) && (head == "" || stemTailRE().MatchString(head))
}

// stemTailRE matches the end of a question's stem, "TASK.qN", that holds at least N's last digit.
var stemTailRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(([a-zA-Z0-9_-]*\.)?q)?[0-9]+$`) })

func onlyBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
