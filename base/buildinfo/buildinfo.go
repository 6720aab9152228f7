// Package buildinfo names the build of warmstat that is running, as its runs record it
// and --version prints it.
package buildinfo

import "runtime/debug"

// Version is stamped, the version the Makefile gives the build; without one, what the
// Go toolchain recorded: the module's version (go install ...@v1.2.3, or a pseudo
// version), else the commit a checkout was built from ("+dirty" with uncommitted
// changes), else "dev".
func Version(stamped string) string {
	if stamped != "" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return recorded(info)
}

// recorded is the version the toolchain recorded in info.
func recorded(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) >= 12 {
		return rev[:12] + dirty
	}
	return "dev"
}
