package evitaserver

import (
	"slices"
	"testing"
)

// Options a JVM takes from the environment are read from the JVM's own words (this
// machine's java, no server): they change a run as much as a flag does.
func TestJVMRecordsOptionsFromTheEnvironment(t *testing.T) {
	for _, v := range JavaOptionsVariables {
		t.Setenv(v, "")
	}
	j, err := LocalJVM()
	if err != nil {
		t.Fatal(err)
	}
	if len(j.EnvOptions) != 0 {
		t.Fatalf("no options in the environment, recorded %q", j.EnvOptions)
	}
	t.Setenv("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1  -Xss2m")
	t.Setenv("JAVA_TOOL_OPTIONS", "-Dwarmstat.test=1")
	if j, err = LocalJVM(); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(j.EnvOptions))
	want := []string{"JAVA_TOOL_OPTIONS=-Dwarmstat.test=1", "JDK_JAVA_OPTIONS=-XX:TieredStopAtLevel=1  -Xss2m"}
	if !slices.Equal(got, want) || !slices.Contains(j.Flags, "-XX:TieredStopAtLevel=1") {
		t.Fatalf("recorded %q (flags %q), want %q", got, j.Flags, want)
	}
	for _, c := range []struct {
		line, want string
		ok         bool
	}{
		{"NOTE: Picked up JDK_JAVA_OPTIONS: -Xmx1g", "JDK_JAVA_OPTIONS=-Xmx1g", true},
		{"Picked up _JAVA_OPTIONS: -Dx=1 ", "_JAVA_OPTIONS=-Dx=1", true},
		{"Picked up SOMETHING_ELSE: -Dx=1", "", false},
		{"[info][gc] Picked up nothing", "", false},
	} {
		if got, ok := pickedUp(c.line); got != c.want || ok != c.ok {
			t.Errorf("pickedUp(%q) = %q %v, want %q %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
