// Package proc is the room of the process table: a scan of the whole table (Scan), or of only the
// panes' own trees through the kernel's children lists (ScanPanes, ScanPane), a process's start
// time, and the walks that find a pane's processes at any depth (DescendantPIDs, Descendants,
// Depths, Ancestors, Foreground). It reads /proc only: it imports the standard library and
// go-ps, never the rest of paneops, which finds and reaches panes with it.
package proc
