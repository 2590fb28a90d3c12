package mailbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// lookAt is an exchange's await lock and log as successive looks see them, whichever of the two
// is looked at: looks[i] is (locked, read) at the i-th look, the last one from then on.
func lookAt(looks ...[2]bool) (locked, read func() bool) {
	n := 0
	look := func() [2]bool {
		at := looks[min(n, len(looks)-1)]
		n++
		return at
	}
	return func() bool { return look()[0] }, func() bool { return look()[1] }
}

// An await that returns the response between the two looks (it records the read, then lets go of
// its lock) is seen by one of them, so its response is not typed again. Looked at log first, it
// was seen by neither.
func TestResponseTakenByAnAwaitReturningBetweenTheLooks(t *testing.T) {
	waiting, returned := [2]bool{true, false}, [2]bool{false, true}
	assert.Equal(t, "an await is waiting on the exchange and wakes on the file", responseTaken(lookAt(waiting, returned)))

	assert.Equal(t, "an await returned the response", responseTaken(lookAt(returned)))
	assert.Equal(t, "an await is waiting on the exchange and wakes on the file", responseTaken(lookAt(waiting)))
	// No await, or one whose time ran out before the looks: the line is typed.
	assert.Empty(t, responseTaken(lookAt([2]bool{false, false})))
}
