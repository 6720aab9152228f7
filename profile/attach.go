package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// attachTimeout bounds how long the JVM may take to open its attach listener after
// SIGQUIT, and one command's exchange.
const attachTimeout = 30 * time.Second

// attach sends one command to a HotSpot JVM through its dynamic attach mechanism (the
// protocol jcmd and jattach speak: a UNIX socket /tmp/.java_pid<pid>, opened by the
// JVM on SIGQUIT when an .attach_pid<pid> file exists). It costs the JVM no extra
// process start, unlike jcmd, which is a JVM of its own: on a small machine that start
// would compete with the server for its cores. It returns the command's output; a
// non-zero status is an error carrying that output.
func attach(pid int, cmd string, args ...string) (string, error) {
	if len(args) > 3 {
		return "", errors.New("attach: at most 3 arguments")
	}
	sock := filepath.Join("/proc", strconv.Itoa(pid), "root", "tmp", ".java_pid"+strconv.Itoa(pid))
	if err := openListener(pid, sock); err != nil {
		return "", err
	}
	conn, err := net.DialTimeout("unix", sock, attachTimeout)
	if err != nil {
		return "", fmt.Errorf("attach to JVM %d: %w", pid, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(attachTimeout))
	var req bytes.Buffer
	req.WriteString("1\x00" + cmd + "\x00")
	for i := 0; i < 3; i++ {
		if i < len(args) {
			req.WriteString(args[i])
		}
		req.WriteByte(0)
	}
	if _, err := conn.Write(req.Bytes()); err != nil {
		return "", fmt.Errorf("attach to JVM %d: %w", pid, err)
	}
	resp, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("attach to JVM %d: %w", pid, err)
	}
	status, out, _ := strings.Cut(string(resp), "\n")
	code, err := strconv.Atoi(strings.TrimSpace(status))
	if err != nil {
		return "", fmt.Errorf("attach to JVM %d: unreadable response %q", pid, firstLine(string(resp)))
	}
	if code != 0 {
		return out, fmt.Errorf("JVM %d refused %s (status %d): %s", pid, cmd, code, firstLine(out))
	}
	return out, nil
}

// openListener makes the JVM open its attach socket, unless it already has.
func openListener(pid int, sock string) error {
	if isSocket(sock) {
		return nil
	}
	trigger := filepath.Join("/proc", strconv.Itoa(pid), "cwd", ".attach_pid"+strconv.Itoa(pid))
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		trigger = filepath.Join(os.TempDir(), ".attach_pid"+strconv.Itoa(pid))
		if err := os.WriteFile(trigger, nil, 0o600); err != nil {
			return fmt.Errorf("attach to JVM %d: %w", pid, err)
		}
	}
	defer os.Remove(trigger)
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		return fmt.Errorf("attach to JVM %d: %w", pid, err)
	}
	deadline := time.Now().Add(attachTimeout)
	for wait := 10 * time.Millisecond; !isSocket(sock); wait = min(2*wait, 500*time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("attach to JVM %d: no attach listener within %s (started with -XX:+DisableAttachMechanism?)", pid, attachTimeout)
		}
		time.Sleep(wait)
	}
	return nil
}

func isSocket(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&os.ModeSocket != 0
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
