package buildinfo

import (
	"runtime/debug"
	"testing"
)

// A stamped version wins; else the module's version, else the checkout's commit
// (marked dirty when it had uncommitted changes), else dev.
func TestVersion(t *testing.T) {
	if v := Version("v9.9.9-stamped"); v != "v9.9.9-stamped" {
		t.Errorf("stamped: %q", v)
	}
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	for _, c := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: rev}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "0123456789ab"},
		{debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "0123456789ab+dirty"},
		{debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})}, "0123456789ab"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123"}}}, "dev"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := recorded(&c.info); got != c.want {
			t.Errorf("%+v: %q, want %q", c.info, got, c.want)
		}
	}
}
