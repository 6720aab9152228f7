package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// KillAll ends a tracked group as a whole: the shell and the child it started in the
// background; a forgotten group is left alone.
func TestKillAllEndsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > "+pidFile+"; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	forget := Track(cmd.Process.Pid)
	defer forget()
	var child int
	for end := time.Now().Add(10 * time.Second); child == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the shell did not start its child")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	if n := KillAll(); n != 1 {
		t.Fatalf("KillAll reached %d groups, want 1", n)
	}
	cmd.Wait()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the group's background child outlived KillAll")
		}
	}
	forget()
	if n := KillAll(); n != 0 {
		t.Errorf("KillAll after forget reached %d groups", n)
	}
}
