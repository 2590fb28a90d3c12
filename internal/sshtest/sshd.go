package sshtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// systemSSHD is where Debian's openssh-server puts sshd.
const systemSSHD = "/usr/sbin/sshd"

// EnvSSHD names the sshd the hosts run, in place of the system's or the unpacked one.
const EnvSSHD = "WCOMM_SSHD"

// unpackedDir is the folder of the module where make deps unpacks the openssh-server package
// (scripts/deps.sh) when the system has no sshd: the package is not installed, so no sshd service
// is enabled on the machine for the tests' sake.
const unpackedDir = ".cache/sshd"

// Inside a host's namespace, an unpacked package's folder is mounted here.
const sshdDir = "/tmp/sshd"

// sshd is the sshd program the hosts run, and the folder of its unpacked package ("" for the
// system's own or one EnvSSHD names).
type sshd struct {
	Path string
	Root string
}

// findSSHD finds sshd: EnvSSHD, else the system's, else the one unpacked in the module's
// .cache/sshd (found from the working folder up, where go test runs each package).
func findSSHD() (sshd, error) {
	if p := os.Getenv(EnvSSHD); p != "" {
		return sshd{Path: p}, nil
	}
	if _, err := os.Stat(systemSSHD); err == nil {
		return sshd{Path: systemSSHD}, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return sshd{}, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			root := filepath.Join(dir, unpackedDir)
			p := filepath.Join(root, "usr", "sbin", "sshd")
			if _, err := os.Stat(p); err != nil {
				return sshd{}, errors.New(systemSSHD + " and " + p + " are missing: run make deps (unpacks openssh-server there, installs nothing)")
			}
			return sshd{Path: p, Root: root}, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return sshd{}, errors.New(systemSSHD + " is missing: run make deps")
		}
		dir = up
	}
}

// inside is the path of a file of the unpacked package as a host's namespace sees it.
func (s sshd) inside(path string) string {
	rel, err := filepath.Rel(s.Root, path)
	if s.Root == "" || err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return filepath.Join(sshdDir, rel)
}

// libPath is LD_LIBRARY_PATH inside a host for an unpacked sshd: the package's folders of shared
// libraries (scripts/deps.sh unpacks there those the system lacks, such as libwrap0).
func (s sshd) libPath() string {
	if s.Root == "" {
		return ""
	}
	var dirs []string
	filepath.WalkDir(s.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(d.Name(), ".so") || strings.Contains(d.Name(), ".so.")) {
			if dir := s.inside(filepath.Dir(p)); len(dirs) == 0 || dirs[len(dirs)-1] != dir {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	return strings.Join(dirs, ":")
}

// configLines are the sshd_config lines an unpacked sshd needs: OpenSSH 9.8 and later start
// sshd-session (and 10.0 sshd-auth) from a path built in, which an unpacked package does not
// have; their options point it at the package's own.
func (s sshd) configLines() string {
	if s.Root == "" {
		return ""
	}
	var b strings.Builder
	for opt, name := range map[string]string{"SshdSessionPath": "sshd-session", "SshdAuthPath": "sshd-auth"} {
		p := filepath.Join(s.Root, "usr", "lib", "openssh", name)
		if _, err := os.Stat(p); err == nil {
			b.WriteString(opt + " " + s.inside(p) + "\n")
		}
	}
	return b.String()
}
