package settings

// The environment's overrides of the settings (WCOMM_*), applied over the file's.

import (
	"fmt"
	"strconv"
	"strings"
)

func (s *Values) applyEnv(getenv func(string) string) error {
	if v := getenv("WCOMM_QUESTION_RELAY"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_QUESTION_RELAY: %w", err)
		}
		s.RelayEnabled = b
	}
	if v := getenv("WCOMM_QUESTION_TIMEOUT"); v != "" {
		d, err := ParseDuration(v)
		if err != nil {
			return fmt.Errorf("WCOMM_QUESTION_TIMEOUT: %w", err)
		}
		s.QuestionTimeout = d
	}
	if v := getenv("WCOMM_AUTO_ANSWER"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_AUTO_ANSWER: %w", err)
		}
		s.AutoAnswer = b
	}
	if v := getenv("WCOMM_MAX_QUESTIONS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("WCOMM_MAX_QUESTIONS: %q is not a whole number of 1 or more", v)
		}
		s.MaxQuestions = n
	}
	if v := getenv("WCOMM_ENTER_DELAY"); v != "" {
		d, err := ParseDuration(v)
		if err == nil {
			err = checkEnterDelay(d)
		}
		if err != nil {
			return fmt.Errorf("WCOMM_ENTER_DELAY: %w", err)
		}
		s.EnterDelay = d
	}
	if v := getenv("WCOMM_MAIL_TTL"); v != "" {
		d, err := ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("WCOMM_MAIL_TTL: %q is not a duration of more than 0, such as 6h", v)
		}
		s.MailTTL = d
	}
	if v := getenv("WCOMM_NO_QUEUE"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_NO_QUEUE: %w", err)
		}
		s.NoQueue = b
	}
	if v := getenv("WCOMM_ON_QUESTION"); v != "" {
		argv, err := splitCommand(v)
		if err != nil {
			return fmt.Errorf("WCOMM_ON_QUESTION: %w", err)
		}
		s.OnQuestion = argv
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on/off, true/false or 1/0", v)
}
