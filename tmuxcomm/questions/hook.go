package questions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// runHook runs the on_question command for one question: argv without a shell, the question's
// JSON on stdin, WCOMM_QUESTION_ID and WCOMM_QUESTION_FILE in its environment, bounded by
// timeout (its whole process group is killed then).
func (d *Desk) runHook(ctx context.Context, argv []string, timeout time.Duration, dir string, st *QuestionStatus) error {
	if timeout <= 0 {
		timeout = settings.DefaultOnQuestionTimeout
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(append(data, '\n'))
	cmd.Env = append(os.Environ(), "WCOMM_QUESTION_ID="+st.ID, "WCOMM_QUESTION_FILE="+st.Path)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so a timeout ends whatever the hook started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%s did not finish within %s and was killed", argv[0], timeout)
	}
	if err != nil {
		if tail := strings.TrimSpace(out.String()); tail != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, messages.SanitizeField(tail))
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// limitedBuffer keeps the last 2 KiB written to it: enough to say why a hook failed.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 2048 {
		l.b = l.b[len(l.b)-2048:]
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
