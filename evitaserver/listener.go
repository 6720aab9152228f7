package evitaserver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listensOn reports whether process pid holds a socket listening on TCP port port, read
// from /proc/net/tcp{,6} (the listening sockets and their inodes) and the process's file
// descriptors. known is false when /proc cannot tell (no such files).
func listensOn(pid, port int) (mine, known bool) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		ins, err := listeningInodes(f, port)
		if err != nil {
			continue
		}
		known = true
		for _, in := range ins {
			inodes[in] = true
		}
	}
	if !known || len(inodes) == 0 {
		return false, known
	}
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return true, true
		}
	}
	return false, true
}

// listeningInodes are the inodes of the sockets in state LISTEN (0A) on port in one
// of /proc/net/tcp's files ("sl local_address rem_address st ... inode").
func listeningInodes(file string, port int) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", port)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 10 && strings.HasSuffix(fields[1], suffix) && fields[3] == "0A" {
			out = append(out, fields[9])
		}
	}
	return out, sc.Err()
}
