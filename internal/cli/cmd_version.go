package cli

import (
	"flag"
	"fmt"
	"runtime"

	"github.com/wcomm/wcomm/internal/buildinfo"
)

// buildVersion returns the version and commit of this binary (buildinfo: set at build time).
func buildVersion() (string, string) { return buildinfo.Version() }

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

// reportedVersion is the version told to other programs (the MCP handshake).
func reportedVersion() string { return buildinfo.Reported() }
