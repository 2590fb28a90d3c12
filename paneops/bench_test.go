package paneops

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
)

// Benchmarks: `go test -run '^$' -bench . ./paneops`. Timing lives here, never in a test's
// assertion.

func BenchmarkScanProcs(b *testing.B) {
	for b.Loop() {
		if _, err := proc.Scan(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanAndFind is what `wcomm send --to AGENT` pays on this machine's real process table:
// one scan plus the cmdlines of every process in every pane.
// BenchmarkScanPane is what a delivery (and a deliverer's every look) reads of the process table:
// one pane's tree, here this process's parent's, against BenchmarkScanProcs's whole table.
func BenchmarkScanPane(b *testing.B) {
	for b.Loop() {
		if _, err := proc.ScanPane(os.Getppid(), os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanAndFind(b *testing.B) {
	tb, err := proc.Scan()
	if err != nil {
		b.Fatal(err)
	}
	panes := []Pane{{ID: "%0", PID: 1}} // pid 1's tree is the whole machine: the worst case
	b.ReportMetric(float64(len(tb.Procs)), "procs")
	for b.Loop() {
		tb, _ = proc.Scan()
		Find(panes, tb, "no-such-agent-anywhere", Exclude{})
	}
}

// syntheticTable is 50 panes of 100 processes each (5000 in all), every pane a chain of 4 levels
// that fans out, with "needle-agent" deep in the last pane.
func syntheticTable() ([]Pane, *proc.Table) {
	var procs []proc.Process
	var panes []Pane
	pid := 1000
	for p := range 50 {
		root := pid
		panes = append(panes, Pane{ID: messages.PaneID(fmt.Sprintf("%%%d", p)), PID: root})
		procs = append(procs, proc.Process{PID: root, PPID: 1, SID: root, Comm: "bash", Args: []string{"-bash"}})
		pid++
		parent := root
		for i := 1; i < 100; i++ {
			name := "worker"
			if p == 49 && i == 99 {
				name = "needle-agent"
			}
			procs = append(procs, proc.Process{PID: pid, PPID: parent, SID: root, Comm: "node",
				Args: []string{"node", "/usr/lib/node_modules/" + name + "/cli.js", "--flag", fmt.Sprint(i)}})
			if i%25 == 0 {
				parent = pid // go one level deeper every 25 processes
			}
			pid++
		}
	}
	return panes, ptable(procs...)
}

func BenchmarkFind(b *testing.B) {
	panes, tb := syntheticTable()
	b.ReportMetric(float64(len(tb.Procs)), "procs")
	for b.Loop() {
		if m := Find(panes, tb, "needle-agent", Exclude{Pane: "%0", PIDs: []int{1}}); len(m) != 1 {
			b.Fatalf("want 1 match, got %d", len(m))
		}
	}
}

// BenchmarkDeliver is one guarded paste (no Enter) into a recorder pane on a private server.
func BenchmarkDeliver(b *testing.B) {
	s := startServer(b)
	rec := s.startRecorder(0)
	d := s.delivery(rec.pane, "benchmark message", false)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.c.Deliver(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliverSubmit adds the separate Enter call with no delay.
func BenchmarkDeliverSubmit(b *testing.B) {
	s := startServer(b)
	rec := s.startRecorder(0)
	d := s.delivery(rec.pane, "benchmark message", true)
	d.EnterDelay = 0
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.c.Deliver(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}
