package sshtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Supervise runs the supervisor when this process was started as one (by Start) and never returns
// then; otherwise it returns at once. A TestMain calls it first.
func Supervise() {
	share := os.Getenv(supervisorEnv)
	if share == "" {
		return
	}
	if err := supervise(share, os.Getenv("WCOMM_SSHTEST_BIN")); err != nil {
		fmt.Fprintln(os.Stderr, "sshtest supervisor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func supervise(share, bin string) error {
	// The folders are opened before /tmp is covered, and mounted from their open descriptors.
	sf, err := os.Open(share)
	if err != nil {
		return err
	}
	bf, err := os.Open(bin)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(filepath.Join(share, "sshd_config"))
	if err != nil {
		return err
	}
	addr, port := listenOf(string(cfg))
	if err := syscall.Mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777"); err != nil {
		return fmt.Errorf("mount /tmp: %w", err)
	}
	for _, m := range []struct {
		f  *os.File
		to string
	}{{sf, ShareDir}, {bf, BinDir}} {
		if err := os.Mkdir(m.to, 0o700); err != nil {
			return err
		}
		if err := syscall.Mount(fmt.Sprintf("/proc/self/fd/%d", m.f.Fd()), m.to, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.to, err)
		}
		m.f.Close()
	}
	// The host's own HOME: sshd takes it from the password database.
	if u, err := user.Current(); err == nil && u.HomeDir != "" && u.HomeDir != "/" {
		if err := syscall.Mount("tmpfs", u.HomeDir, "tmpfs", 0, "mode=0700"); err != nil {
			return fmt.Errorf("mount %s: %w", u.HomeDir, err)
		}
	}
	// sshd's privilege separation folder.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}
	var sshd *exec.Cmd
	stop := func() {
		if sshd != nil {
			sshd.Process.Signal(syscall.SIGTERM)
			sshd.Wait()
			sshd = nil
		}
		killNamespace(func(comm string) bool { return comm == "sshd" })
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "start":
			if sshd != nil {
				fmt.Println("ok")
				continue
			}
			log, err := os.OpenFile(filepath.Join(ShareDir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				fmt.Println("err", err)
				continue
			}
			sshd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(ShareDir, "sshd_config"))
			sshd.Stderr = log
			sshd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
			err = sshd.Start()
			log.Close()
			if err == nil {
				err = Ready(addr, port, time.Now().Add(30*time.Second))
			}
			if err != nil {
				fmt.Println("err", err)
				continue
			}
			fmt.Println("ok")
		case "stop":
			stop()
			fmt.Println("ok")
		default:
			fmt.Println("err unknown command")
		}
	}
	stop()
	// Everything else this host started: its tmux server and the panes' programs.
	killNamespace(func(string) bool { return true })
	return nil
}

// killNamespace kills the processes of this mount namespace (but this one) whose command name
// pass match, and waits until they are gone.
func killNamespace(match func(comm string) bool) {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
			if err != nil || ns != self {
				continue
			}
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if !match(strings.TrimSpace(string(comm))) {
				continue
			}
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if f := strings.Fields(string(stat[min(len(stat), strings.LastIndexByte(string(stat), ')')+1):])); len(f) > 0 && f[0] == "Z" {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				continue
			}
			syscall.Kill(pid, syscall.SIGKILL)
			left++
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond) // the polling interval, to the deadline above
	}
}

// listenOf reads ListenAddress and Port from an sshd_config.
func listenOf(cfg string) (string, int) {
	var addr string
	var port int
	for _, line := range strings.Split(cfg, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "ListenAddress" {
			addr = f[1]
		}
		if len(f) == 2 && f[0] == "Port" {
			port, _ = strconv.Atoi(f[1])
		}
	}
	return addr, port
}
