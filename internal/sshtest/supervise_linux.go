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
	d := sshd{Path: os.Getenv("WCOMM_SSHTEST_SSHD"), Root: os.Getenv("WCOMM_SSHTEST_SSHD_ROOT")}
	if err := supervise(share, os.Getenv("WCOMM_SSHTEST_BIN"), d); err != nil {
		fmt.Fprintln(os.Stderr, "sshtest supervisor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func supervise(share, bin string, d sshd) error {
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
	mounts := []struct {
		f  *os.File
		to string
	}{{sf, ShareDir}, {bf, BinDir}}
	// An unpacked sshd's folder (the module's, perhaps under the HOME covered below) is mounted too.
	libPath := d.libPath()
	if d.Root != "" {
		rf, err := os.Open(d.Root)
		if err != nil {
			return err
		}
		mounts = append(mounts, struct {
			f  *os.File
			to string
		}{rf, sshdDir})
		d.Path = d.inside(d.Path)
	}
	if err := syscall.Mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777"); err != nil {
		return fmt.Errorf("mount /tmp: %w", err)
	}
	for _, m := range mounts {
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
	// sshd's privilege separation folder, and its user.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}
	if err := privsepUser(); err != nil {
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
			sshd = exec.Command(d.Path, "-D", "-e", "-f", filepath.Join(ShareDir, "sshd_config"))
			sshd.Stderr = log
			sshd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
			if libPath != "" {
				sshd.Env = append(sshd.Env, "LD_LIBRARY_PATH="+libPath)
			}
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

// privsepUser gives this namespace a password database with the user sshd drops its privileges
// to, when the machine has none (openssh-server, which adds it, is unpacked, not installed): a copy
// of /etc/passwd with the user added is mounted over it here, and only here.
func privsepUser() error {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(passwd), "\n") {
		if strings.HasPrefix(line, "sshd:") {
			return nil
		}
	}
	if len(passwd) > 0 && passwd[len(passwd)-1] != '\n' {
		passwd = append(passwd, '\n')
	}
	// nobody's ids, as the user owns nothing: sshd only changes to it in its empty /run/sshd.
	passwd = append(passwd, "sshd:x:65534:65534:sshd privilege separation:/run/sshd:/usr/sbin/nologin\n"...)
	copyPath := "/tmp/passwd"
	if err := os.WriteFile(copyPath, passwd, 0o644); err != nil {
		return err
	}
	if err := syscall.Mount(copyPath, "/etc/passwd", "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount /etc/passwd: %w", err)
	}
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
