// findfloor is the floor of `wcomm find AGENT --session S` for the bench: one tmux client call
// listing the session's panes, then each pane's process tree read through the kernel's children
// files, the command line of each process matched against AGENT. It prints the one pane that
// matches and exits 0, or exits 4 (no pane, or several). Nothing else: no resident, no profiles,
// no listing of what runs where.
//
// Usage: findfloor SOCKET SESSION AGENT
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

func children(pid int) []int {
	var out []int
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(field); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: findfloor SOCKET SESSION AGENT")
		os.Exit(2)
	}
	sock, session, agent := os.Args[1], os.Args[2], []byte(os.Args[3])
	out, err := exec.Command("tmux", "-S", sock, "list-panes", "-s", "-t", session, "-F", "#{pane_id} #{pane_pid}").Output()
	if err != nil {
		os.Exit(1)
	}
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		pid, _ := strconv.Atoi(f[1])
		for stack := []int{pid}; len(stack) > 0; {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if bytes.Contains(cmdline, agent) {
				found = append(found, f[0])
				break
			}
			stack = append(stack, children(p)...)
		}
	}
	if len(found) != 1 {
		os.Exit(4)
	}
	fmt.Println(found[0])
}
