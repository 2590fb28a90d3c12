package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time: -ldflags "-X main.version=v1.2.3 -X main.commit=abc123".
var (
	version = ""
	commit  = ""
)

// buildVersion returns the version and commit, falling back to what the Go toolchain recorded.
func buildVersion() (string, string) {
	v, c := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && c == "" {
				c = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" && c != "" && c == commitFromInfo(info) {
				c += "-dirty"
			}
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

func commitFromInfo(info *debug.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
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
