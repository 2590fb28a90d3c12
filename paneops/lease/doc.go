// Package lease says whether some process holds a file open for writing: a response written by a
// plain `cat > file` heredoc exists, empty or half written, while its writer runs, so a reader
// takes it only when no writer holds it. On Linux the kernel answers through a read lease
// (fcntl F_SETLEASE), taken and let go at once; elsewhere, or where no lease can be taken, the
// open files of every process in /proc are read. It imports only the standard library and
// golang.org/x/sys/unix.
package lease
