//go:build linux && !amd64 && !arm64

package store

// sysRenameat2 is unknown here: publishing falls back to link(2).
const sysRenameat2 = -1
