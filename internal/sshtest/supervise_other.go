//go:build !linux

package sshtest

// Supervise does nothing off Linux: the hosts need Linux mount namespaces.
func Supervise() {}
