// Package buildinfo is the version and commit a wcomm binary was built from, as the build set them
// or, unset, as the Go toolchain recorded them. It imports nothing of wcomm.
package buildinfo

import "runtime/debug"

// version and commit are set at build time:
//
//	go build -ldflags "-X github.com/wcomm/wcomm/internal/buildinfo.version=v1.2.3 -X github.com/wcomm/wcomm/internal/buildinfo.commit=abc123" ./cmd/...
//
// Unset, they fall back to what the Go toolchain recorded: the module version of a
// `go install ...@v1.2.3` build, and the VCS revision of a build inside a git work tree.
var (
	version = ""
	commit  = ""
)

// Version returns the version and commit ("devel" and "unknown" when neither the build nor the
// toolchain says).
func Version() (string, string) {
	v, c := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		if c == "" {
			c = vcsCommit(info)
		}
	}
	if v == "" {
		v = "devel"
	}
	if c == "" {
		c = "unknown"
	}
	return v, c
}

// vcsCommit is the recorded VCS revision, with "-dirty" when the work tree had local changes.
func vcsCommit(info *debug.BuildInfo) string {
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}

// Reported is the version told to other programs (the MCP handshake): what 'wcomm version'
// prints, with the commit when the build has no version to tell builds apart by.
func Reported() string {
	v, c := Version()
	if v == "devel" && c != "unknown" {
		return "devel-" + c
	}
	return v
}
