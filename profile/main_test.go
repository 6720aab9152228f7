package profile_test

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/warmstat/warmstat/internal/evitatest"
)

// noPerfJava: when set, this test binary is not a test run but a java launcher that
// forbids perf_event_open (EACCES, as a kernel or container does where perf events
// are not permitted) and then becomes the JVM named by the variable.
const noPerfJava = "WARMSTAT_TEST_NO_PERF_JAVA"

func TestMain(m *testing.M) {
	if java := os.Getenv(noPerfJava); java != "" {
		if err := forbidPerfEvents(); err != nil {
			fmt.Fprintln(os.Stderr, "no-perf launcher:", err)
			os.Exit(97)
		}
		err := syscall.Exec(java, append([]string{java}, os.Args[1:]...), os.Environ())
		fmt.Fprintln(os.Stderr, "no-perf launcher:", err)
		os.Exit(98)
	}
	code := m.Run()
	evitatest.RemoveShared()
	os.Exit(code)
}

// forbidPerfEvents installs a seccomp filter on every thread of this process (and so
// on what it executes): perf_event_open fails with EACCES, every other call is allowed.
func forbidPerfEvents() error {
	runtime.LockOSThread()
	const (
		ld, jeq, ret = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_RET | unix.BPF_K
		retAllow     = 0x7fff0000 // SECCOMP_RET_ALLOW
		retErrno     = 0x00050000 // SECCOMP_RET_ERRNO
		filterMode   = 1          // SECCOMP_SET_MODE_FILTER
		tsync        = 1          // SECCOMP_FILTER_FLAG_TSYNC
	)
	filter := []unix.SockFilter{
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_PERF_EVENT_OPEN},
		{Code: ret, K: retErrno | uint32(unix.EACCES)},
		{Code: ret, K: retAllow},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, filterMode, tsync, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return e
	}
	return nil
}
