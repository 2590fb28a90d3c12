package actions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

func TestActionHashTarget(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	write("docs/a.md", "a")
	write("docs/sub/b.md", "b")
	kind, first, err := hashTarget(dir, "docs")
	require.NoError(t, err)
	assert.Equal(t, messages.TargetDir, kind)

	write("docs/.git/HEAD", "ref")
	_, sum, err := hashTarget(dir, "docs")
	require.NoError(t, err)
	assert.Equal(t, first, sum, "a .git folder is not content")

	write("docs/sub/b.md", "B")
	_, sum, err = hashTarget(dir, "docs")
	require.NoError(t, err)
	assert.NotEqual(t, first, sum, "a file's content below the folder")
	write("docs/sub/b.md", "b")
	require.NoError(t, os.Rename(filepath.Join(dir, "docs/a.md"), filepath.Join(dir, "docs/c.md")))
	_, sum, err = hashTarget(dir, "docs")
	require.NoError(t, err)
	assert.NotEqual(t, first, sum, "a rename")

	kind, _, err = hashTarget(dir, filepath.Join(dir, "docs/c.md"))
	require.NoError(t, err)
	assert.Equal(t, messages.TargetFile, kind, "an absolute path is taken as it is")
	_, _, err = hashTarget(dir, "gone")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
