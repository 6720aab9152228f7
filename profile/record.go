package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Modes are the profiles a writer can be started with: async-profiler's CPU,
// allocation, wall-clock and lock-contention sampling, and the JDK's Flight Recorder
// (execution samples).
var Modes = []string{"cpu", "alloc", "wall", "lock", "jfr"}

// Default sampling intervals, per mode.
const (
	// DefaultCPUInterval is async-profiler's own default, and measured to cost the
	// scale-0.05 load less than 3 % of its wall-clock (docs/profile.md, "What profiling costs").
	DefaultCPUInterval = 10 * time.Millisecond
	// DefaultWallInterval: wall-clock sampling visits every thread, idle ones too; a
	// server has dozens, so it samples 5x less often than CPU time.
	DefaultWallInterval = 50 * time.Millisecond
	// DefaultAllocBytes: one sample per 512 KiB allocated (async-profiler's default;
	// the writer allocates gigabytes per load).
	DefaultAllocBytes = 512 << 10
	// DefaultLockThreshold: contended waits shorter than this are not recorded.
	DefaultLockThreshold = 10 * time.Microsecond
	// DefaultJFRPeriod is the JDK's own default (default.jfc) for execution samples.
	DefaultJFRPeriod = 20 * time.Millisecond
)

// Options choose the writer's profiler.
type Options struct {
	Mode     string // one of Modes
	Interval int64  // ns, or bytes for alloc; 0 = the mode's default
	// Artifact is the fetched async-profiler (its agent for cpu, alloc, wall and lock;
	// its converter for every mode).
	Artifact Artifact
	Java     string // the JVM's java binary, whose jfr tool reads recordings (default: $JAVA_HOME/bin/java, else java on PATH)
	WorkDir  string // recordings are written here while the writer runs
	Warn     func(string)
}

// OptionError is an option that cannot be used; Option names the Options field.
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return e.Msg }

// Recorder profiles one writer JVM: an agent on its command line (async-profiler),
// windows opened and closed through the JVM's attach mechanism at the edges of the
// load and of goLive, and, after the run, the recordings turned into flame graphs,
// folded stacks and pprof profiles in the run directory.
type Recorder struct {
	o       Options
	unit    string
	pid     int
	control time.Duration
	phases  []string // windows opened, in order
	open    string
	errs    []error
}

// New checks the options and fills in defaults.
func New(o Options) (*Recorder, error) {
	if !slices.Contains(Modes, o.Mode) {
		return nil, &OptionError{"Mode", fmt.Sprintf("profile mode %q is not one of %s", o.Mode, strings.Join(Modes, ", "))}
	}
	if o.Interval < 0 {
		return nil, &OptionError{"Interval", fmt.Sprintf("sampling interval %d must be positive", o.Interval)}
	}
	r := &Recorder{o: o, unit: runfmt.UnitNanoseconds}
	if o.Mode == "alloc" {
		r.unit = runfmt.UnitBytes
	}
	if r.o.Interval == 0 {
		r.o.Interval = map[string]int64{"cpu": int64(DefaultCPUInterval), "wall": int64(DefaultWallInterval),
			"alloc": DefaultAllocBytes, "lock": int64(DefaultLockThreshold), "jfr": int64(DefaultJFRPeriod)}[o.Mode]
	}
	if r.o.Mode == "jfr" && r.o.Interval < int64(time.Millisecond) {
		return nil, &OptionError{"Interval", fmt.Sprintf("JFR samples at most every 1ms, not every %s", runfmt.FormatInterval(r.o.Interval, r.unit))}
	}
	if o.Artifact.Converter == "" {
		return nil, &OptionError{"Artifact", "no async-profiler (its converter turns every recording into flame graphs and pprof)"}
	}
	if o.WorkDir == "" {
		return nil, &OptionError{"WorkDir", "no directory for the recordings"}
	}
	// the JVM writes the recordings from its own working directory
	abs, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, err
	}
	r.o.WorkDir = abs
	if r.o.Java == "" {
		r.o.Java = "java"
		if home := os.Getenv("JAVA_HOME"); home != "" {
			r.o.Java = filepath.Join(home, "bin", "java")
		}
	}
	return r, nil
}

func (r *Recorder) profiler() string {
	if r.o.Mode == "jfr" {
		return runfmt.ProfilerJFR
	}
	return runfmt.ProfilerAsync
}

// JVMOptions are the writer's extra JVM options: async-profiler is loaded at the JVM's
// start (it then sees every method compiled, and sets -XX:+DebugNonSafepoints for
// exact frames) and samples nothing until a window opens. JFR needs none.
func (r *Recorder) JVMOptions() []string {
	if r.o.Mode == "jfr" {
		return nil
	}
	return []string{"-agentpath:" + r.o.Artifact.Lib}
}

// Attach names the JVM to profile (the writer, once it answers). A Recorder profiles
// one run: a series makes one per run (New).
func (r *Recorder) Attach(pid int) error {
	if r.pid != 0 {
		return fmt.Errorf("profile: this recorder already profiled JVM %d (one recorder per run)", r.pid)
	}
	if err := os.MkdirAll(r.o.WorkDir, 0o755); err != nil {
		return err
	}
	r.pid = pid
	return nil
}

func (r *Recorder) recording(phase string) string {
	return filepath.Join(r.o.WorkDir, phase+".jfr")
}

// Window opens (begin) or closes the profile of one phase. It is called outside the
// clocks; the time it takes is the run's measured control cost.
func (r *Recorder) Window(phase string, begin bool) error {
	if r.pid == 0 {
		return errors.New("profile: no JVM attached")
	}
	t0 := time.Now()
	defer func() { r.control += time.Since(t0) }()
	var err error
	if begin {
		if r.open != "" {
			return fmt.Errorf("profile: %s opened while %s is open", phase, r.open)
		}
		err = r.start(phase)
		if err == nil {
			r.open = phase
			r.phases = append(r.phases, phase)
		}
	} else {
		if r.open != phase {
			return fmt.Errorf("profile: %s closed but %q is open", phase, r.open)
		}
		r.open = ""
		err = r.stop(phase)
	}
	if err != nil {
		err = fmt.Errorf("profiling %s: %w", phase, err)
		r.errs = append(r.errs, err)
	}
	return err
}

func (r *Recorder) start(phase string) error {
	rec := r.recording(phase)
	os.Remove(rec)
	if r.o.Mode == "jfr" {
		jfc := filepath.Join(r.o.WorkDir, "warmstat.jfc")
		if err := os.WriteFile(jfc, []byte(jfrSettings(r.o.Interval)), 0o644); err != nil {
			return err
		}
		_, err := attach(r.pid, "jcmd", fmt.Sprintf("JFR.start name=warmstat-%s settings=%s filename=%s", phase, jfc, rec))
		return err
	}
	return r.agent(phase, "start,"+r.eventOptions()+",file="+rec)
}

func (r *Recorder) stop(phase string) error {
	rec := r.recording(phase)
	if r.o.Mode == "jfr" {
		_, err := attach(r.pid, "jcmd", fmt.Sprintf("JFR.stop name=warmstat-%s filename=%s", phase, rec))
		return err
	}
	return r.agent(phase, "stop,file="+rec)
}

// eventOptions are async-profiler's options for the mode. cpu asks for perf events
// and lets async-profiler fall back to a timer where they are not permitted; the
// recording says which engine sampled (WriterProfile.Engine).
func (r *Recorder) eventOptions() string {
	iv := strconv.FormatInt(r.o.Interval, 10)
	switch r.o.Mode {
	case "alloc":
		return "event=alloc,alloc=" + iv
	case "lock":
		return "event=lock,lock=" + iv
	}
	return "event=" + r.o.Mode + ",interval=" + iv
}

// agent sends one command to the async-profiler agent loaded in the writer; its log
// (warnings such as a fallback from perf events) is kept beside the recording.
func (r *Recorder) agent(phase, cmd string) error {
	log := filepath.Join(r.o.WorkDir, phase+".log")
	out, err := attach(r.pid, "load", r.o.Artifact.Lib, "true", cmd+",log="+log)
	if err != nil {
		return err
	}
	if _, code, ok := strings.Cut(strings.TrimSpace(out), "return code: "); ok && strings.TrimSpace(code) != "0" {
		msg, _ := os.ReadFile(log)
		return fmt.Errorf("async-profiler refused %q (return code %s): %s", cmd, strings.TrimSpace(code), firstLine(string(msg)))
	}
	if msg, _ := os.ReadFile(log); r.o.Warn != nil {
		for _, l := range strings.Split(string(msg), "\n") {
			if strings.Contains(l, "[WARN]") || strings.Contains(l, "[ERROR]") {
				r.o.Warn("async-profiler: " + strings.TrimSpace(l))
			}
		}
	}
	return nil
}

// jfrSettings is a Flight Recorder configuration with execution samples at period and
// the recording's own settings, nothing else: the JDK's profile settings also record
// allocations, I/O and locks, which cost the writer more than the samples do.
func jfrSettings(period int64) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="warmstat" description="warmstat: execution samples of the writer">
  <event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">` +
		strconv.FormatInt(period/int64(time.Millisecond), 10) + ` ms</setting></event>
  <event name="jdk.ActiveSetting"><setting name="enabled">true</setting></event>
  <event name="jdk.JVMInformation"><setting name="enabled">true</setting><setting name="period">beginChunk</setting></event>
</configuration>
`
}

// Record is the profile as a condition, before its files exist (a manifest written
// before Finish says so).
func (r *Recorder) Record() *runfmt.WriterProfile {
	w := &runfmt.WriterProfile{Profiler: r.profiler(), Mode: r.o.Mode, Event: r.o.Mode, Interval: r.o.Interval, IntervalUnit: r.unit,
		Cost: runfmt.ProfileCost{ControlNs: r.control.Nanoseconds()}, Error: "not converted: the run ended before its profiles were written"}
	if r.o.Mode == "jfr" {
		w.Event = "jdk.ExecutionSample"
	}
	if r.profiler() == runfmt.ProfilerAsync {
		w.Version = r.o.Artifact.Version
	}
	return w
}

// ProfileDir is the run directory's folder for profiles.
const ProfileDir = "profile"

// Finish turns each window's recording into the run directory's profile files
// (runDir/profile/<phase>.{jfr,html,collapsed.gz,pb.gz}) and returns the record for the
// manifest. It runs after the writer has stopped, so no conversion competes with the
// measurement. A phase that cannot be converted is named in the record's Error.
func (r *Recorder) Finish(runDir string) *runfmt.WriterProfile {
	w := r.Record()
	w.Error = ""
	errs := slices.Clone(r.errs)
	if r.open != "" {
		errs = append(errs, fmt.Errorf("the %s window was never closed", r.open))
	}
	dir := filepath.Join(runDir, ProfileDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		errs = append(errs, err)
	}
	for _, phase := range r.phases {
		if phase == r.open {
			continue
		}
		p, settings, err := r.convert(phase, dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s profile: %w", phase, err))
			continue
		}
		w.Phases = append(w.Phases, p)
		r.applySettings(w, settings)
	}
	if w.Version == "" {
		if v, err := jvmVersion(r.o.Java); err == nil {
			w.Version = v
		}
	}
	if len(errs) > 0 {
		w.Error = errors.Join(errs...).Error()
		w.Error = strings.ReplaceAll(w.Error, "\n", "; ")
	}
	if len(w.Phases) == 0 && w.Error == "" {
		w.Error = "no window was profiled (the load did not start)"
	}
	return w
}

// applySettings takes the event and engine the recording says were used.
func (r *Recorder) applySettings(w *runfmt.WriterProfile, s map[string]string) {
	if r.o.Mode == "jfr" {
		return
	}
	if v := s["event"]; v != "" {
		w.Event = v
	}
	if v := s["engine"]; v != "" && v != "noop" { // noop: no CPU engine beside alloc or lock
		w.Engine = v
	}
}

// tool is a JDK tool beside the java binary (jfr).
func (r *Recorder) tool(name string) string {
	java := r.o.Java
	if p, err := exec.LookPath(java); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			java = real
		}
	}
	return filepath.Join(filepath.Dir(java), name)
}

// activeSettings reads the recording's jdk.ActiveSetting events (name -> value) with
// the JDK's jfr tool: async-profiler states there which engine sampled.
func (r *Recorder) activeSettings(rec string) (map[string]string, error) {
	out, err := exec.Command(r.tool("jfr"), "print", "--json", "--events", "jdk.ActiveSetting", rec).Output()
	if err != nil {
		return nil, fmt.Errorf("jfr print %s: %w", rec, err)
	}
	var doc struct {
		Recording struct {
			Events []struct {
				Values struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"values"`
			} `json:"events"`
		} `json:"recording"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("jfr print %s: %w", rec, err)
	}
	s := map[string]string{}
	for _, e := range doc.Recording.Events {
		s[e.Values.Name] = e.Values.Value
	}
	return s, nil
}

// jvmVersion is the JVM's version (JFR is part of it).
func jvmVersion(java string) (string, error) {
	out, err := exec.Command(java, "-XshowSettings:properties", "-version").CombinedOutput()
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " = "); ok && k == "java.vm.version" {
			return v, nil
		}
	}
	return "", errors.New("no java.vm.version")
}

// convert writes one phase's files and reads back its totals.
func (r *Recorder) convert(phase, dir string) (runfmt.ProfilePhase, map[string]string, error) {
	p := runfmt.ProfilePhase{Name: phase, Recording: ProfileDir + "/" + phase + ".jfr", FlameGraph: ProfileDir + "/" + phase + ".html",
		Pprof: ProfileDir + "/" + phase + ".pb.gz", Collapsed: ProfileDir + "/" + phase + ".collapsed.gz"}
	runDir := filepath.Dir(dir)
	src := r.recording(phase)
	if st, err := os.Stat(src); err != nil || st.Size() == 0 {
		return p, nil, fmt.Errorf("no recording at %s", src)
	}
	if err := copyFile(src, filepath.Join(runDir, p.Recording)); err != nil {
		return p, nil, err
	}
	settings, err := r.activeSettings(src)
	if err != nil && r.o.Warn != nil {
		r.o.Warn(fmt.Sprintf("the %s recording's settings could not be read: %v", phase, err))
	}
	kind := r.kind()
	total := kind.weighted // allocated bytes and blocked time are weights, not sample counts
	title := fmt.Sprintf("writer %s, %s (%s)", phase, r.o.Mode, kind.describe)
	if err := r.jfrconv(src, filepath.Join(runDir, p.FlameGraph), kind.flag, total, "--title", title); err != nil {
		return p, nil, err
	}
	folded := filepath.Join(r.o.WorkDir, phase+".collapsed")
	if err := r.jfrconv(src, folded, kind.flag, total); err != nil {
		return p, nil, err
	}
	counts := folded
	if total {
		counts = filepath.Join(r.o.WorkDir, phase+".counts.collapsed")
		if err := r.jfrconv(src, counts, kind.flag, false); err != nil {
			return p, nil, err
		}
	}
	prof, samples, value, err := buildPprof(folded, counts, kind, r.o.Interval, phase)
	if err != nil {
		return p, nil, err
	}
	if err := gzipFile(folded, filepath.Join(runDir, p.Collapsed)); err != nil { // deep stacks: tens of MB as text
		return p, nil, err
	}
	if err := writePprof(filepath.Join(runDir, p.Pprof), prof); err != nil {
		return p, nil, err
	}
	p.Samples, p.Value, p.ValueUnit = samples, value, kind.unit
	return p, settings, nil
}

func (r *Recorder) jfrconv(in, out, flag string, total bool, extra ...string) error {
	args := []string{"-jar", r.o.Artifact.Converter, "--dot", "--norm"}
	if flag != "" {
		args = append(args, flag)
	}
	if total {
		args = append(args, "--total")
	}
	args = append(append(args, extra...), in, out)
	var stderr bytes.Buffer
	cmd := exec.Command(r.o.Java, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("converting %s to %s: %v: %s", filepath.Base(in), filepath.Base(out), err, firstLine(stderr.String()))
	}
	return nil
}

// gzipFile writes from, gzipped, to to (zcat feeds it to flamegraph.pl or speedscope).
func gzipFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	return runfmt.WriteFileAtomic(to, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		return zw.Close()
	})
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
