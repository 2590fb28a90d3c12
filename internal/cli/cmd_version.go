package cli

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time:
//
//	go build -ldflags "-X github.com/wcomm/wcomm/internal/cli.version=v1.2.3 -X github.com/wcomm/wcomm/internal/cli.commit=abc123" ./cmd/...
//
// Unset, they fall back to what the Go toolchain recorded: the module version of a
// `go install ...@v1.2.3` build, and the VCS revision of a build inside a git work tree.
var (
	version = ""
	commit  = ""
)

// buildVersion returns the version and commit.
func buildVersion() (string, string) {
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

func init() {
	register(&command{
		Name: "version", Args: "", Role: "admin",
		Summary: "print wcomm's version and commit",
		Example: "wcomm version\nwcomm version --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments")
				}
				v, commit := buildVersion()
				if c.json {
					return c.printJSON(map[string]string{"version": v, "commit": commit, "go": runtime.Version()})
				}
				fmt.Fprintf(c.stdout, "wcomm %s (commit %s, %s)\n", v, commit, runtime.Version())
				return nil
			}
		},
	})
}

// reportedVersion is the version told to other programs (the MCP handshake): what 'wcomm version'
// prints, with the commit when the build has no version to tell builds apart by.
func reportedVersion() string {
	v, c := buildVersion()
	if v == "devel" && c != "unknown" {
		return "devel-" + c
	}
	return v
}
