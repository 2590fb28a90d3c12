package store

import "fmt"

// kindError is an error of a kind (a sentinel: ErrNotFound, ErrStale, ...) whose text is its own
// sentence only: fmt.Errorf("...: %w", ErrNotFound) would end it with ": not found", a tail that
// says nothing the sentence has not said. errors.Is and errors.As see both the kind and whatever
// the sentence wraps.
type kindError struct {
	err  error
	kind error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// Kindf returns the error the format makes (it may wrap others with %w), of kind: errors.Is(err,
// kind) holds, and kind's words are not added to its text.
func Kindf(kind error, format string, a ...any) error {
	return &kindError{err: fmt.Errorf(format, a...), kind: kind}
}
