package questions

import (
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
	tooLarge := func(n int64) error {
		return store.Kindf(store.ErrTooLarge, "question file %s is unreadable: it is %d bytes, more than the %s a question may be (no ask writes one that large); answer its agent where it waits",
			path, n, store.SizeText(maxQuestionFile))
	}
	if st.Size > maxQuestionFile {
		return nil, tooLarge(st.Size)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxQuestionFile+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if len(data) > maxQuestionFile {
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}
