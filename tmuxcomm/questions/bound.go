package questions

import (
	"fmt"
	"io"
	"os"

	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// maxQuestionFile bounds a question file as read: the largest an ask writes (2,000 characters of
// question, 500 of context, 26 options of 300 and their descriptions of 400, each character at
// most 6 bytes once JSON-escaped) is under 160 KiB. A larger one was not written by an ask, and
// is refused unread: the bridge looks at every question often, and would post it whole.
const maxQuestionFile = 256 << 10

// readQuestionFile reads a question file (a regular file, no symlink) of at most maxQuestionFile
// bytes; the bound holds while the file grows.
func readQuestionFile(path string) ([]byte, error) {
	fd, st, _, err := store.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	tooLarge := fmt.Errorf("%s is more than the %d bytes an ask writes; it is not read: %w", path, maxQuestionFile, store.ErrTooLarge)
	if st.Size > maxQuestionFile {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxQuestionFile+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if len(data) > maxQuestionFile {
		return nil, tooLarge
	}
	return data, nil
}
