package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real go test on a module of a passing test, a failing one with a passing and a failing
// subtest, and a skipped one: what go test prints without -json (the failures whole, each
// package's closing line), then the count, and go test's exit code.
func TestSummaryOfARealRun(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		"m_test.go": `package m

import "testing"

func TestGood(t *testing.T) { t.Log("quiet when it passes") }

func TestBad(t *testing.T) {
	t.Run("fine", func(t *testing.T) {})
	t.Run("broken", func(t *testing.T) { t.Error("this went wrong") })
}

func TestLater(t *testing.T) { t.Skip("not today") }
`,
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	bin := filepath.Join(t.TempDir(), "testsum")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	assert.Equal(t, 1, ee.ExitCode(), "go test's own exit code")
	got := stdout.String()
	assert.Contains(t, got, "--- FAIL: TestBad/broken")
	assert.Contains(t, got, "this went wrong")
	assert.Contains(t, got, "--- FAIL: TestBad ")
	assert.Contains(t, got, "FAIL\texample.com/m\t", "the package's closing line")
	assert.NotContains(t, got, "=== RUN")
	assert.NotContains(t, got, "quiet when it passes", "a passing test's log is not printed, as without -json")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	assert.Equal(t, "2 passed, 2 failed, 1 skipped", lines[len(lines)-1], "the closing line:\n%s", got)

	// All passing: exit 0, and the count.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestGood(t *testing.T) {}\n"), 0o600))
	cmd = exec.Command(bin, "go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	out, err = cmd.Output()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, "^ok  \texample.com/m\t.*\n1 passed, 0 failed\n$", string(out))
}

func TestSummarizeKeepsWhatIsNotJSON(t *testing.T) {
	in := "go: downloading x\n" +
		`{"Action":"build-output","ImportPath":"p","Output":"p/x.go:1:1: syntax error\n"}` + "\n" +
		`{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}` + "\n" +
		`{"Action":"fail","Package":"p"}` + "\n"
	var w bytes.Buffer
	c := summarize(strings.NewReader(in), &w)
	assert.Equal(t, "go: downloading x\np/x.go:1:1: syntax error\nFAIL\tp [build failed]\n", w.String())
	assert.Equal(t, "0 passed, 0 failed", c.String())
}
