package settings

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/messages"
)

// HostDef is a declared remote host: only declared hosts are reachable. Via is an argv prefix
// that runs a command on the host with stdin and stdout carried (["ssh", "gpu1"], ["docker",
// "exec", "-i", "box"], ["kubectl", "exec", "-i", "pod", "--"]); Wcomm is the wcomm binary there.
type HostDef struct {
	Name  string   `json:"name"`
	Via   []string `json:"via"`
	Wcomm string   `json:"wcomm"`
}

// DefaultRemoteWcomm is the binary run on a host without a wcomm entry: found on its PATH.
const DefaultRemoteWcomm = "wcomm"

// hostFile is one entry of the hosts block.
type hostFile struct {
	Via   argvList `yaml:"via"`
	Wcomm string   `yaml:"wcomm"`
}

// remotePathRE: ssh hands the remote command to the remote user's shell, so the binary's path is
// kept to characters no shell reads specially (a leading ~/ is expanded there, on purpose).
// Compiled when first used, not at every start of wcomm.
var remotePathRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(~/)?[A-Za-z0-9_./+-]+$`) })

// ViaSSH reports whether a host is reached through ssh, whose connection can be shared.
func (h HostDef) ViaSSH() bool { return len(h.Via) > 0 && path.Base(h.Via[0]) == "ssh" }

// CheckHost validates a host's definition.
func CheckHost(h HostDef) error {
	if err := messages.ValidHostName(h.Name); err != nil {
		return err
	}
	if len(h.Via) == 0 {
		return fmt.Errorf("host %s: via is empty; give the argv that runs a command there, such as [ssh, %s]", h.Name, h.Name)
	}
	for i, w := range h.Via {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("host %s: via word %d is empty or holds a control character", h.Name, i+1)
		}
	}
	if strings.HasPrefix(h.Via[0], "-") {
		return fmt.Errorf("host %s: via starts with an option (%q); it starts with the program, such as ssh", h.Name, messages.SanitizeField(h.Via[0]))
	}
	if !remotePathRE().MatchString(h.Wcomm) || strings.HasPrefix(h.Wcomm, "-") || strings.Contains(h.Wcomm, "..") {
		return fmt.Errorf("host %s: wcomm %q: give the binary's path there with letters, digits and ./_+- only (or ~/...)", h.Name, messages.SanitizeField(h.Wcomm))
	}
	return nil
}

// resolveHosts checks the hosts block of the settings file at path.
func resolveHosts(path string, in map[string]hostFile) (map[string]HostDef, error) {
	out := make(map[string]HostDef, len(in))
	for name, f := range in {
		h := HostDef{Name: name, Via: f.Via, Wcomm: f.Wcomm}
		if h.Wcomm == "" {
			h.Wcomm = DefaultRemoteWcomm
		}
		if err := CheckHost(h); err != nil {
			return nil, fmt.Errorf("%s: hosts: %w", path, err)
		}
		out[name] = h
	}
	return out, nil
}
